//! The integration tests of `piceli`, in one test binary (one link for the crate): each module is
//! one suite, run alone with `cargo test -p piceli --test it MODULE::`.

mod abandon;
mod approval_seals;
mod block_expressions;
mod checks;
mod cluster_session;
mod corpus;
mod crd_versions;
mod custom_resources;
#[path = "../deploy_fixture/mod.rs"]
mod deploy_fixture;
mod deploy_journal;
mod deploy_rollback;
mod deploy_stages;
mod engine;
#[path = "../engine_fixture/mod.rs"]
mod engine_fixture;
mod expression_places;
mod external_project;
mod externals;
mod generated_secrets;
mod guarantees;
mod images_deploy;
mod immutable_fields;
mod include_namespaces;
mod include_objects;
mod included_services;
mod ingress_shapes;
mod job_replace;
mod rbac_subjects;
mod render_blocks;
mod render_out;
mod runtime_values;
mod services_of_no_workload;
#[path = "../../image/tests/support/mod.rs"]
mod support;
mod takeover;
mod ui;
mod unnamed_ports;
mod workload_readiness;
