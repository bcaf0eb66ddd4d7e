//! Apply waits for every workload kind to be ready (in process, on the local cluster or on the real control
//! plane of `PICELI_REAL_KUBECONFIG`, where kwok plays the kubelet): a Deployment's replicas available, a
//! StatefulSet's pods ready in order, a DaemonSet's pod on every node, a Job complete; a CronJob is
//! written and waits for its schedule. A re-plan after that is a no-op, and the cluster's own status
//! agrees with what apply reported.

use crate::engine_fixture;

use engine_fixture::{Fixture, image};
use piceli::k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use piceli::k8s_openapi::api::batch::v1::{CronJob, Job};
use piceli::runtime::engine::session::Session;

piceli::app! {
    app kinds-test;
    target local = local(namespace: "kinds");
    deployment web {
        image: (image("web")),
        replicas: 2,
        ports: { http: 80 },
    }
    service web -> web { port: 80 => http }
    service db -> db { port: 5432 => pg, spec: { clusterIP: "None" } }
    stateful_set db {
        image: (image("db")),
        replicas: 2,
        service: db,
        ports: { pg: 5432 },
    }
    daemon_set agent {
        image: (image("agent")),
    }
    job migrate {
        image: (image("migrate")),
        command: ["/migrate", "up"],
        backoff_limit: 1,
        restart: "Never",
    }
    cron_job report {
        schedule: "30 2 * * *",
        image: (image("report")),
        command: ["/report"],
    }
}

const NS: &str = "kinds";

async fn reopen(fx: &Fixture) -> Session {
    Session::open(kinds_test::app(), &fx.options("state"))
        .await
        .expect("session")
}

fn api<K>(fx: &Fixture) -> kube::Api<K>
where
    K: kube::Resource<Scope = piceli::k8s_openapi::NamespaceResourceScope>,
    <K as kube::Resource>::DynamicType: Default,
{
    kube::Api::namespaced(fx.sim.client().expect("client"), NS)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_waits_until_every_workload_kind_is_ready() {
    let fx = Fixture::new();
    let mut opts = fx.options("state");
    opts.wait = Some(std::time::Duration::from_secs(120));
    let session = Session::open(kinds_test::app(), &opts)
        .await
        .expect("session");
    let plan = session.plan(vec![], false).await.expect("plan");
    session.apply(&plan.hash).await.expect("applied and ready");

    let web = api::<Deployment>(&fx).get("web").await.expect("web");
    let status = web.status.expect("web status");
    assert_eq!(status.available_replicas, Some(2), "web: {status:?}");

    let db = api::<StatefulSet>(&fx).get("db").await.expect("db");
    let status = db.status.expect("db status");
    assert_eq!(status.ready_replicas, Some(2), "db: {status:?}");

    let agent = api::<DaemonSet>(&fx).get("agent").await.expect("agent");
    let status = agent.status.expect("agent status");
    assert!(status.desired_number_scheduled >= 1, "agent: {status:?}");
    assert_eq!(
        status.number_ready, status.desired_number_scheduled,
        "agent: {status:?}"
    );

    let migrate = api::<Job>(&fx).get("migrate").await.expect("migrate");
    let status = migrate.status.expect("migrate status");
    assert_eq!(status.succeeded, Some(1), "migrate: {status:?}");

    let report = api::<CronJob>(&fx).get("report").await.expect("report");
    assert_eq!(
        report.spec.expect("report spec").schedule,
        "30 2 * * *",
        "the CronJob is written as declared"
    );

    drop(session);
    let again = reopen(&fx).await.plan(vec![], false).await.expect("plan");
    assert!(
        !again.has_changes(),
        "a re-plan after readiness is a no-op: {:?}",
        again
            .actions
            .iter()
            .filter(|a| a.changes())
            .map(|a| (a.key(), &a.diff))
            .collect::<Vec<_>>()
    );
}
