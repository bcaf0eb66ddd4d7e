//! Building parts of an app in Rust: constructors and chained setters for the model, so that a function can
//! make N similar workers or a shared sidecar, and [`App::merge`] to add such a part to the macro's app.
//!
//! A part built here is checked at run time by the same rules and codes as `app!` checks at compile time
//! (before anything is rendered or sent), its problems named by the part's object names.

use super::{
    App, ConfigMap, ConfigValue, Container, ContainerPort, EnvValue, EnvVar, PortRef, Service,
    ServicePort, Workload, WorkloadKind,
};
use crate::spanned::Spanned;

fn bare<T>(v: T) -> Spanned<T> {
    Spanned::bare(v)
}

impl App {
    /// An app (or a part of one) called `name`, with no objects.
    pub fn new(name: impl Into<String>) -> App {
        App {
            name: bare(name.into()),
            ..App::default()
        }
    }

    /// Adds a workload.
    pub fn with_workload(mut self, workload: Workload) -> App {
        self.workloads.push(workload);
        self
    }

    /// Adds a Service.
    pub fn with_service(mut self, service: Service) -> App {
        self.services.push(service);
        self
    }

    /// Adds a ConfigMap.
    pub fn with_config_map(mut self, config_map: ConfigMap) -> App {
        self.config_maps.push(config_map);
        self
    }

    /// Adds every object of `part` to this app (its name, targets, app-wide labels and operator stay this
    /// app's).
    /// The merged app is checked again at run time, so a name the two share is reported (PCL0003).
    pub fn merge(mut self, part: App) -> App {
        let App {
            workloads,
            services,
            config_maps,
            secrets,
            pvcs,
            network_policies,
            ingresses,
            autoscalers,
            disruption_budgets,
            service_accounts,
            roles,
            role_bindings,
            checks,
            includes,
            resources,
            externals,
            builds,
            included_workloads,
            included_services,
            // The app's own: its identity and where it deploys, and what only `app!` can declare (the
            // operator's handlers are Rust code the macro registers).
            name: _,
            targets: _,
            labels: _,
            annotations: _,
            operator: _,
            webhooks: _,
            controllers: _,
            locations: _,
            dynamic: _,
            checked_at_compile_time: _,
            load_error: _,
        } = part;
        self.workloads.extend(workloads);
        self.services.extend(services);
        self.config_maps.extend(config_maps);
        self.secrets.extend(secrets);
        self.pvcs.extend(pvcs);
        self.network_policies.extend(network_policies);
        self.ingresses.extend(ingresses);
        self.autoscalers.extend(autoscalers);
        self.disruption_budgets.extend(disruption_budgets);
        self.service_accounts.extend(service_accounts);
        self.roles.extend(roles);
        self.role_bindings.extend(role_bindings);
        self.checks.extend(checks);
        self.includes.extend(includes);
        self.resources.extend(resources);
        self.externals.extend(externals);
        self.builds.extend(builds);
        self.included_workloads.extend(included_workloads);
        self.included_services.extend(included_services);
        self.checked_at_compile_time = false;
        self
    }
}

impl Workload {
    /// A workload of `kind` with one container named after it, running `image` (pinned by digest, as in
    /// `app!`).
    pub fn new(kind: WorkloadKind, name: impl Into<String>, image: impl Into<String>) -> Workload {
        let name = name.into();
        Workload {
            kind,
            name: bare(name.clone()),
            containers: vec![Container::new(name, image)],
            ..Workload::default()
        }
    }

    /// A Deployment with one container.
    pub fn deployment(name: impl Into<String>, image: impl Into<String>) -> Workload {
        Workload::new(WorkloadKind::Deployment, name, image)
    }

    /// A StatefulSet with one container.
    pub fn stateful_set(name: impl Into<String>, image: impl Into<String>) -> Workload {
        Workload::new(WorkloadKind::StatefulSet, name, image)
    }

    /// A Job with one container.
    pub fn job(name: impl Into<String>, image: impl Into<String>) -> Workload {
        Workload::new(WorkloadKind::Job, name, image)
    }

    /// Desired replicas (Deployment, StatefulSet).
    pub fn replicas(mut self, replicas: i64) -> Workload {
        self.replicas = Some(bare(replicas));
        self
    }

    /// A named port of the first container.
    pub fn port(mut self, name: impl Into<String>, number: i64) -> Workload {
        self.first_container().ports.push(ContainerPort {
            name: bare(name.into()),
            number: bare(number),
            protocol: None,
        });
        self
    }

    /// A literal environment variable of the first container.
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Workload {
        self.first_container().env.push(EnvVar {
            name: bare(name.into()),
            value: EnvValue::Literal(bare(value.into())),
        });
        self
    }

    /// The arguments of the first container.
    pub fn args<S: Into<String>>(mut self, args: impl IntoIterator<Item = S>) -> Workload {
        self.first_container().args = args.into_iter().map(|a| bare(a.into())).collect();
        self
    }

    /// A label of the workload object.
    pub fn label(mut self, key: impl Into<String>, value: impl Into<String>) -> Workload {
        self.labels.push((bare(key.into()), bare(value.into())));
        self
    }

    /// Adds a container (a sidecar) beside the first.
    pub fn container(mut self, container: Container) -> Workload {
        self.containers.push(container);
        self
    }

    fn first_container(&mut self) -> &mut Container {
        if self.containers.is_empty() {
            self.containers
                .push(Container::new(self.name.v.clone(), String::new()));
        }
        &mut self.containers[0]
    }
}

impl Container {
    /// A container running `image`.
    pub fn new(name: impl Into<String>, image: impl Into<String>) -> Container {
        Container {
            name: bare(name.into()),
            image: bare(image.into()),
            ..Container::default()
        }
    }
}

impl Service {
    /// A Service for `workload`'s pods.
    pub fn to(name: impl Into<String>, workload: impl Into<String>) -> Service {
        Service {
            name: bare(name.into()),
            selects: bare(workload.into()),
            ..Service::default()
        }
    }

    /// A port forwarding to the workload's container port named `target` (`port: 80 => http`).
    pub fn port(mut self, port: i64, target: impl Into<String>) -> Service {
        let target = target.into();
        self.ports.push(ServicePort {
            name: bare(target.clone()),
            port: bare(port),
            target: Some(PortRef::Name(bare(target))),
            node_port: None,
        });
        self
    }
}

impl ConfigMap {
    /// A ConfigMap with no data.
    pub fn new(name: impl Into<String>) -> ConfigMap {
        ConfigMap {
            name: bare(name.into()),
            ..ConfigMap::default()
        }
    }

    /// A literal key.
    pub fn data(mut self, key: impl Into<String>, value: impl Into<String>) -> ConfigMap {
        self.data
            .push((bare(key.into()), ConfigValue::Literal(bare(value.into()))));
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NGINX: &str = "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d";

    fn workers(n: usize) -> App {
        (0..n).fold(App::new("part"), |app, i| {
            app.with_workload(
                Workload::deployment(format!("worker-{i}"), NGINX)
                    .replicas(2)
                    .port("http", 8080)
                    .env("SHARD", i.to_string()),
            )
            .with_service(
                Service::to(format!("worker-{i}"), format!("worker-{i}")).port(80, "http"),
            )
        })
    }

    #[test]
    fn a_built_part_passes_the_same_rules_as_the_macro() {
        let app = App::new("shop").merge(workers(3));
        assert_eq!(app.workloads.len(), 3);
        assert_eq!(app.name.v, "shop");
        assert!(!app.checked_at_compile_time);
        assert_eq!(crate::validate::validate(&app), Vec::new());
    }

    #[test]
    fn a_built_part_breaking_a_rule_gets_the_macros_code() {
        let app = App::new("shop")
            .merge(workers(1))
            .merge(workers(1))
            .with_workload(Workload::deployment("Bad_Name", NGINX));
        let codes: Vec<_> = crate::validate::validate(&app)
            .into_iter()
            .map(|d| d.code)
            .collect();
        assert!(codes.contains(&crate::Code::DuplicateObject), "{codes:?}");
        assert!(codes.contains(&crate::Code::InvalidName), "{codes:?}");
    }
}
