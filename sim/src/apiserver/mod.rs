//! The apiserver's front layers before the registry: authentication (admin token,
//! ServiceAccount tokens, impersonation), request attributes, RBAC authorization with its
//! bootstrap policy, and the self reviews that expose it to clients.

pub(crate) mod accept;
pub(crate) mod app;
pub mod discovery;
mod discovery_data;
pub(crate) mod filters;
pub(crate) mod fuzzing;
mod go_json;
pub(crate) mod handlers;
pub(crate) mod head_errors;
pub mod http;
pub mod kubeconfig;
pub(crate) mod list_options;
pub mod openapi;
pub(crate) mod openapi_captured;
pub(crate) mod openapi_v2;
pub mod proto;
pub(crate) mod proxy;
pub(crate) mod query;
pub mod router;
pub(crate) mod scratch_dir;
pub(crate) mod server;
pub mod stream;
pub mod tls;
pub(crate) mod write_options;
pub(crate) mod yaml_body;

pub(crate) mod attributes;
pub(crate) mod identity;
pub(crate) mod policy;
pub(crate) mod rbac;
pub mod rbac_usage;
pub(crate) mod reviews;
pub(crate) mod tokens;

pub use identity::UserInfo;
pub use rbac_usage::RbacUse;
