//! Which forwards `access` serves: every Service that declares `access: forward(local: …)`, narrowed by
//! `--only NAME` and with local ports moved by `--port NAME=LOCAL`.

use super::error::AccessError;
use piceli_core::model::{App, PortRef};

/// One forward to serve.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// The Service's name (what `--only` and `--port` name).
    pub name: String,
    /// The Service port the forward reaches (its number, for display).
    pub service_port: i64,
    /// The Service port as `forward::connect` takes it (`None`: the first).
    pub port: Option<PortRef>,
    /// The local port on 127.0.0.1 (0: any free port).
    pub local_port: u16,
    /// The HTTP path probed for health.
    pub health: Option<String>,
}

fn parse_override(text: &str) -> Result<(String, u16), AccessError> {
    let bad = || {
        AccessError::BadPort(format!(
            "`--port {text}`: write NAME=LOCAL with LOCAL from 0 to 65535, e.g. `--port web=18081`"
        ))
    };
    let (name, port) = text.split_once('=').ok_or_else(bad)?;
    let port: u16 = port.trim().parse().map_err(|_| bad())?;
    if name.trim().is_empty() {
        return Err(bad());
    }
    Ok((name.trim().to_string(), port))
}

/// The forwards to serve, in declaration order.
pub fn forwards(app: &App, only: &[String], ports: &[String]) -> Result<Vec<Spec>, AccessError> {
    let mut all = Vec::new();
    for s in &app.services {
        let Some(a) = &s.access else { continue };
        let service_port = match &a.port {
            Some(n) => s.ports.iter().find(|p| p.name.v == n.v),
            None => s.ports.first(),
        }
        .map_or(0, |p| p.port.v);
        let local_port = u16::try_from(a.local_port.v).map_err(|_| {
            AccessError::BadPort(format!(
                "service `{}` declares local port {}, outside 0..=65535",
                s.name.v, a.local_port.v
            ))
        })?;
        all.push(Spec {
            name: s.name.v.clone(),
            service_port,
            port: a.port.clone().map(PortRef::Name),
            local_port,
            health: a.health.as_ref().map(|h| h.v.clone()),
        });
    }
    if all.is_empty() {
        return Err(AccessError::NoForwards(app.name.v.clone()));
    }
    let declared = all
        .iter()
        .map(|s| s.name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let unknown = |name: &str| AccessError::UnknownForward {
        name: name.to_string(),
        declared: declared.clone(),
    };
    for name in only {
        if !all.iter().any(|s| &s.name == name) {
            return Err(unknown(name));
        }
    }
    let mut overrides = Vec::new();
    for text in ports {
        let (name, port) = parse_override(text)?;
        if !all.iter().any(|s| s.name == name) {
            return Err(unknown(&name));
        }
        overrides.push((name, port));
    }
    let mut chosen: Vec<Spec> = all
        .iter()
        .filter(|s| only.is_empty() || only.contains(&s.name))
        .cloned()
        .collect();
    for s in &mut chosen {
        if let Some((_, p)) = overrides.iter().rev().find(|(n, _)| *n == s.name) {
            s.local_port = *p;
        }
    }
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;
    use piceli_core::Coded;
    use piceli_core::model::{Access, Service, ServicePort};
    use piceli_core::spanned::Spanned;

    fn app() -> App {
        let svc = |name: &str, local: Option<i64>| Service {
            name: Spanned::bare(name.into()),
            ports: vec![ServicePort {
                name: Spanned::bare("http".into()),
                port: Spanned::bare(80),
                ..ServicePort::default()
            }],
            access: local.map(|l| Access {
                local_port: Spanned::bare(l),
                port: None,
                health: Some(Spanned::bare("/healthz".into())),
            }),
            ..Service::default()
        };
        App {
            name: Spanned::bare("shop".into()),
            services: vec![
                svc("web", Some(18080)),
                svc("db", None),
                svc("api", Some(18081)),
            ],
            ..App::default()
        }
    }

    #[test]
    fn every_declared_forward_by_default() {
        let all = forwards(&app(), &[], &[]).unwrap();
        let names: Vec<_> = all
            .iter()
            .map(|s| (s.name.as_str(), s.local_port, s.service_port))
            .collect();
        assert_eq!(names, [("web", 18080, 80), ("api", 18081, 80)]);
        assert_eq!(all[0].health.as_deref(), Some("/healthz"));
    }

    #[test]
    fn only_and_port_overrides() {
        let one = forwards(&app(), &["api".into()], &["api=0".into()]).unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!((one[0].name.as_str(), one[0].local_port), ("api", 0));
    }

    #[test]
    fn bad_input_is_refused_with_codes() {
        let e = forwards(&app(), &["db".into()], &[]).unwrap_err();
        assert_eq!(e.code(), piceli_core::Code::UnknownForward);
        assert!(e.to_string().contains("declared: web, api"), "{e}");
        for bad in ["web", "web=", "web=70000", "=80", "web=x"] {
            let e = forwards(&app(), &[], &[bad.into()]).unwrap_err();
            assert_eq!(e.code(), piceli_core::Code::BadPortOverride, "{bad}");
        }
        let none = App::default();
        assert_eq!(
            forwards(&none, &[], &[]).unwrap_err().code(),
            piceli_core::Code::NoForwards
        );
    }
}
