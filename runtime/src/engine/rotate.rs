//! `plan --rotate SECRET[.KEY]`: which generated keys get new values. A name is resolved against the app's
//! Secrets (a Secret's name may hold dots: the longest name that matches wins), then the rotation spreads:
//! a template naming a rotated key is made again, and so is a certificate signed by a rotated CA.

use super::error::EngineError;
use piceli_core::model::{App, Secret, SecretSource};
use piceli_core::rules::did_you_mean;
use std::collections::{BTreeMap, BTreeSet};

/// Secret name → the DSL keys of its entries to generate again.
pub type Rotations = BTreeMap<String, BTreeSet<String>>;

/// Resolve `asked` (each `SECRET` or `SECRET.KEY`) and spread the rotation to what depends on it.
pub fn resolve(app: &App, asked: &[String]) -> Result<Rotations, EngineError> {
    let mut out = Rotations::new();
    for a in asked {
        let (secret, key) = split(app, a)?;
        let entries: Vec<String> = match key {
            None => {
                let all: Vec<String> = generated(secret).map(|(k, _)| k.v.clone()).collect();
                if all.is_empty() {
                    return Err(EngineError::RotateUnknown {
                        asked: a.clone(),
                        reason: format!(
                            "secret `{}` has no generated key (its values come from the environment or files)",
                            secret.name.v
                        ),
                    });
                }
                all
            }
            Some(key) => vec![entry(secret, key, a)?],
        };
        out.entry(secret.name.v.clone())
            .or_default()
            .extend(entries);
    }
    spread(app, &mut out);
    Ok(out)
}

/// The generated entries of a Secret.
fn generated(s: &Secret) -> impl Iterator<Item = &(piceli_core::spanned::Name, SecretSource)> {
    s.data.iter().filter(|(_, src)| src.is_generated())
}

/// `SECRET.KEY` → the Secret and the key (`None`: the whole Secret).
fn split<'a>(app: &'a App, asked: &'a str) -> Result<(&'a Secret, Option<&'a str>), EngineError> {
    let find = |name: &str| app.secrets.iter().find(|s| s.name.v == name);
    if let Some(s) = find(asked) {
        return Ok((s, None));
    }
    // The longest Secret name followed by `.KEY`.
    let mut best: Option<(&Secret, usize)> = None;
    for (i, _) in asked.match_indices('.') {
        if let Some(s) = find(&asked[..i]) {
            best = Some((s, i));
        }
    }
    if let Some((s, i)) = best {
        return Ok((s, Some(&asked[i + 1..])));
    }
    let names: Vec<&str> = app.secrets.iter().map(|s| s.name.v.as_str()).collect();
    let head = asked.split('.').next().unwrap_or(asked);
    let reason = match did_you_mean(head, names.iter().copied()) {
        Some(n) => format!("the app has no secret `{head}`; did you mean `{n}`?"),
        None if names.is_empty() => "the app declares no secret".to_string(),
        None => format!(
            "the app has no secret `{head}`; its secrets are {}",
            quoted(names.iter().copied())
        ),
    };
    Err(EngineError::RotateUnknown {
        asked: asked.to_string(),
        reason,
    })
}

/// The DSL key of the entry `key` names (itself, or a data key a TLS generator fills), if generated.
fn entry(s: &Secret, key: &str, asked: &str) -> Result<String, EngineError> {
    let generated_keys: Vec<String> = s
        .data_keys()
        .into_iter()
        .filter(|(_, i)| s.data[*i].1.is_generated())
        .map(|(k, _)| k)
        .chain(generated(s).map(|(k, _)| k.v.clone()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    match s.entry(key) {
        Some(i) if s.data[i].1.is_generated() => Ok(s.data[i].0.v.clone()),
        Some(_) => Err(EngineError::RotateUnknown {
            asked: asked.to_string(),
            reason: format!(
                "`{key}` of secret `{}` is not generated (it comes from the environment or a file): change its source instead",
                s.name.v
            ),
        }),
        None => {
            let reason = match did_you_mean(key, generated_keys.iter().map(String::as_str)) {
                Some(k) => format!(
                    "secret `{}` has no key `{key}`; did you mean `{}.{k}`?",
                    s.name.v, s.name.v
                ),
                None if generated_keys.is_empty() => {
                    format!("secret `{}` has no generated key", s.name.v)
                }
                None => format!(
                    "secret `{}` has no key `{key}`; its generated keys are {}",
                    s.name.v,
                    quoted(generated_keys.iter().map(String::as_str))
                ),
            };
            Err(EngineError::RotateUnknown {
                asked: asked.to_string(),
                reason,
            })
        }
    }
}

fn quoted<'a>(items: impl Iterator<Item = &'a str>) -> String {
    items
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Templates naming a rotated key, and certificates signed by a rotated CA, rotate too (until nothing
/// more does).
fn spread(app: &App, out: &mut Rotations) {
    loop {
        let mut more: Vec<(String, String)> = Vec::new();
        for s in &app.secrets {
            let rotated = out.get(&s.name.v);
            let rotated_data: BTreeSet<String> = rotated
                .map(|keys| {
                    s.data
                        .iter()
                        .filter(|(k, _)| keys.contains(&k.v))
                        .flat_map(|(k, src)| src.data_keys(&k.v))
                        .collect()
                })
                .unwrap_or_default();
            for (k, src) in &s.data {
                if rotated.is_some_and(|r| r.contains(&k.v)) {
                    continue;
                }
                let rotates = match src {
                    SecretSource::Template(_) => src
                        .template_keys()
                        .unwrap_or_default()
                        .iter()
                        .any(|n| rotated_data.contains(n)),
                    SecretSource::TlsSignedBy { ca, .. } => {
                        out.get(&ca.v).is_some_and(|r| r.contains("tls"))
                    }
                    _ => false,
                };
                if rotates {
                    more.push((s.name.v.clone(), k.v.clone()));
                }
            }
        }
        if more.is_empty() {
            return;
        }
        for (s, k) in more {
            out.entry(s).or_default().insert(k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use piceli_core::spanned::Spanned;

    fn name(s: &str) -> Spanned<String> {
        Spanned::bare(s.to_string())
    }

    fn app() -> App {
        let random = || SecretSource::Generated {
            length: Spanned::bare(32),
        };
        let mut app = App::default();
        app.secrets.push(Secret {
            name: name("db"),
            data: vec![
                (name("password"), random()),
                (name("other"), random()),
                (name("user"), SecretSource::Env(name("DB_USER"))),
                (
                    name("url"),
                    SecretSource::Template(name("postgres://{user}:{password}@db/app")),
                ),
            ],
            ..Secret::default()
        });
        app.secrets.push(Secret {
            name: name("ca"),
            data: vec![(
                name("tls"),
                SecretSource::TlsSelfSigned {
                    hosts: vec![name("ca")],
                    days: Spanned::bare(3650),
                    is_ca: true,
                },
            )],
            ..Secret::default()
        });
        app.secrets.push(Secret {
            name: name("api.tls"),
            data: vec![(
                name("tls"),
                SecretSource::TlsSignedBy {
                    ca: name("ca"),
                    hosts: vec![name("api")],
                    days: Spanned::bare(90),
                },
            )],
            ..Secret::default()
        });
        app
    }

    fn keys(r: &Rotations, s: &str) -> Vec<String> {
        r.get(s)
            .map(|k| k.iter().cloned().collect())
            .unwrap_or_default()
    }

    #[test]
    fn a_key_rotates_with_the_templates_naming_it() {
        let r = resolve(&app(), &["db.password".into()]).unwrap();
        assert_eq!(keys(&r, "db"), ["password", "url"]);
        let r = resolve(&app(), &["db.other".into()]).unwrap();
        assert_eq!(keys(&r, "db"), ["other"]);
    }

    #[test]
    fn a_ca_rotates_the_certificates_it_signs_and_dotted_names_resolve() {
        let r = resolve(&app(), &["ca".into()]).unwrap();
        assert_eq!(keys(&r, "ca"), ["tls"]);
        assert_eq!(keys(&r, "api.tls"), ["tls"]);
        let r = resolve(&app(), &["api.tls.tls.crt".into()]).unwrap();
        assert_eq!(keys(&r, "api.tls"), ["tls"]);
        assert!(!r.contains_key("ca"));
    }

    #[test]
    fn unknown_or_not_generated_names_are_refused_with_a_suggestion() {
        let e = resolve(&app(), &["dv.password".into()]).unwrap_err();
        assert!(e.to_string().contains("did you mean `db`"), "{e}");
        let e = resolve(&app(), &["db.pasword".into()]).unwrap_err();
        assert!(e.to_string().contains("did you mean `db.password`"), "{e}");
        let e = resolve(&app(), &["db.user".into()]).unwrap_err();
        assert!(e.to_string().contains("not generated"), "{e}");
        assert_eq!(
            piceli_core::Coded::code(&e),
            piceli_core::Code::RotateUnknown
        );
    }
}
