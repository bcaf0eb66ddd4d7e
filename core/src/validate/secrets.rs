//! Generated secret values: each generator's arguments (hosts, days), data keys filled once, templates that
//! name keys of their Secret without a cycle, and `tls_signed_by` naming a CA of the app.

use super::Ctx;
use crate::codes::Code;
use crate::model::{App, Secret, SecretSource};
use crate::rules::did_you_mean;
use std::collections::{BTreeMap, HashMap};

/// The longest validity a generated certificate may have, in days (ten years).
pub const MAX_DAYS: i64 = 3650;

pub(super) fn check(cx: &mut Ctx, app: &App) {
    for s in &app.secrets {
        keys_once(cx, s);
        for (key, source) in &s.data {
            match source {
                SecretSource::TlsSelfSigned { hosts, days, .. } => tls_args(cx, key, hosts, days),
                SecretSource::TlsSignedBy { ca, hosts, days } => {
                    tls_args(cx, key, hosts, days);
                    signing_ca(cx, app, s, ca);
                }
                _ => {}
            }
        }
        templates(cx, s);
    }
}

/// Each data key is filled by one entry (a TLS generator's `K.crt` is not also a key of its own).
fn keys_once(cx: &mut Ctx, s: &Secret) {
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (key, i) in s.data_keys() {
        match seen.get(&key) {
            Some(&first) if first != i => {
                let (k, _) = &s.data[i];
                let (other, _) = &s.data[first];
                cx.error(
                    Code::SecretGenerator,
                    k.at,
                    format!(
                        "secret `{}`: the data key `{key}` is filled by both `{}` and `{}`",
                        s.name.v, other.v, k.v
                    ),
                    "a TLS generator under key K fills K.crt and K.key (and ca.crt when signed): rename one of the keys",
                );
            }
            Some(_) => {}
            None => {
                seen.insert(key, i);
            }
        }
    }
}

fn tls_args(
    cx: &mut Ctx,
    key: &crate::spanned::Name,
    hosts: &[crate::spanned::Spanned<String>],
    days: &crate::spanned::Spanned<i64>,
) {
    if hosts.is_empty() {
        cx.error(
            Code::SecretGenerator,
            key.at,
            format!("the certificate of `{}` names no host", key.v),
            "list its DNS names or IP addresses: `hosts: [\"db\", \"db.shop.svc\"]`",
        );
    }
    for h in hosts {
        let Some(host) = cx.known(h) else { continue };
        let host = host.clone();
        if let Err(why) = host_ok(&host) {
            cx.error(
                Code::SecretGenerator,
                h.at,
                format!("`{host}` is not a host name for a certificate: {why}"),
                "a DNS name (`db.shop.svc`, `*.example.com`) or an IP address (`10.0.0.1`)",
            );
        }
    }
    if let Some(&d) = cx.known(days)
        && !(1..=MAX_DAYS).contains(&d)
    {
        cx.error(
            Code::SecretGenerator,
            days.at,
            format!("a certificate valid for {d} days"),
            format!("use `days:` from 1 to {MAX_DAYS}"),
        );
    }
}

/// A DNS name (a leading `*.` allowed) or an IP address.
pub fn host_ok(host: &str) -> Result<(), String> {
    if host.parse::<std::net::IpAddr>().is_ok() {
        return Ok(());
    }
    let name = host.strip_prefix("*.").unwrap_or(host);
    crate::rules::dns1123_subdomain(name).map_err(|e| e.message)
}

/// The CA a `tls_signed_by` names: another Secret of the app, holding `tls.crt` and `tls.key` of a CA.
fn signing_ca(cx: &mut Ctx, app: &App, s: &Secret, ca: &crate::spanned::Name) {
    let others = || {
        app.secrets
            .iter()
            .filter(|o| o.name.v != s.name.v)
            .map(|o| o.name.v.as_str())
    };
    let Some(found) = app.secrets.iter().find(|o| o.name.v == ca.v) else {
        let help = match did_you_mean(&ca.v, others()) {
            Some(n) => format!("did you mean `{n}`?"),
            None => format!(
                "declare it: `secret {} {{ tls: generate(tls_self_signed(hosts: [\"{}-ca\"], days: 3650, ca: true)) }}`",
                ca.v, ca.v
            ),
        };
        cx.error(
            Code::SecretCaUnknown,
            ca.at,
            format!(
                "`tls_signed_by({})`: the app has no secret `{}`",
                ca.v, ca.v
            ),
            help,
        );
        return;
    };
    if found.name.v == s.name.v {
        cx.error(
            Code::SecretCaUnknown,
            ca.at,
            format!("secret `{}` cannot sign its own certificate", ca.v),
            "name another secret of the app that holds a CA, or use `tls_self_signed(…)`",
        );
        return;
    }
    if !holds_ca(found) {
        cx.error(
            Code::SecretCaUnknown,
            ca.at,
            format!("secret `{}` holds no CA certificate and key", ca.v),
            format!(
                "give it `tls: generate(tls_self_signed(hosts: [\"{}-ca\"], days: 3650, ca: true))`, or `tls.crt` and `tls.key` from `from_file(…)`",
                ca.v
            ),
        );
    }
}

/// Whether a Secret holds a CA: its key `tls` generated as one, or `tls.crt` and `tls.key` read from outside.
pub fn holds_ca(s: &Secret) -> bool {
    let generated = s.data.iter().any(|(k, src)| {
        k.v == "tls" && matches!(src, SecretSource::TlsSelfSigned { is_ca: true, .. })
    });
    let read = |name: &str| {
        s.data.iter().any(|(k, src)| {
            k.v == name && matches!(src, SecretSource::Env(_) | SecretSource::File(_))
        })
    };
    generated || (read("tls.crt") && read("tls.key"))
}

/// Templates: each parses, names data keys of its Secret, and no template reaches itself.
fn templates(cx: &mut Ctx, s: &Secret) {
    let keys: Vec<String> = s.data_keys().into_iter().map(|(k, _)| k).collect();
    // Entry index → the entries its template names.
    let mut edges: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, (key, source)) in s.data.iter().enumerate() {
        let SecretSource::Template(t) = source else {
            continue;
        };
        if cx.known(t).is_none() {
            continue;
        }
        let named = match source.template_keys() {
            Ok(named) => named,
            Err(why) => {
                cx.error(
                    Code::SecretTemplateKey,
                    t.at,
                    format!("the template of `{}` does not parse: {why}", key.v),
                    "write `{key}` for a key's value and `{{`/`}}` for literal braces",
                );
                continue;
            }
        };
        for n in named {
            match s.entry(&n).filter(|_| keys.contains(&n)) {
                Some(j) => edges.entry(i).or_default().push(j),
                None => {
                    let help = match did_you_mean(&n, keys.iter().map(String::as_str)) {
                        Some(k) => format!("did you mean `{{{k}}}`?"),
                        None => format!(
                            "the keys of secret `{}` are {}",
                            s.name.v,
                            super::list(&keys.iter().map(String::as_str).collect::<Vec<_>>())
                        ),
                    };
                    cx.error(
                        Code::SecretTemplateKey,
                        t.at,
                        format!(
                            "the template of `{}` names `{{{n}}}`, which secret `{}` does not have",
                            key.v, s.name.v
                        ),
                        help,
                    );
                }
            }
        }
    }
    for &start in edges.keys() {
        if reaches(&edges, start, start) {
            let (key, source) = &s.data[start];
            let at = match source {
                SecretSource::Template(t) => t.at,
                _ => key.at,
            };
            cx.error(
                Code::SecretTemplateKey,
                at,
                format!(
                    "the template of `{}` names itself, through the keys it names",
                    key.v
                ),
                "a template may name other templates, but never back: name a key with a value of its own",
            );
        }
    }
}

/// Whether `to` is reachable from `from` in one or more steps.
fn reaches(edges: &BTreeMap<usize, Vec<usize>>, from: usize, to: usize) -> bool {
    let mut stack: Vec<usize> = edges.get(&from).cloned().unwrap_or_default();
    let mut seen = std::collections::HashSet::new();
    while let Some(n) = stack.pop() {
        if n == to {
            return true;
        }
        if seen.insert(n) {
            stack.extend(edges.get(&n).into_iter().flatten().copied());
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Secret;
    use crate::spanned::Spanned;

    fn name(s: &str) -> Spanned<String> {
        Spanned::bare(s.to_string())
    }

    #[test]
    fn hosts_are_dns_names_wildcards_or_ips() {
        assert!(host_ok("db.shop.svc").is_ok());
        assert!(host_ok("*.example.com").is_ok());
        assert!(host_ok("10.0.0.7").is_ok());
        assert!(host_ok("::1").is_ok());
        assert!(host_ok("not a host").is_err());
        assert!(host_ok("").is_err());
    }

    #[test]
    fn a_ca_is_generated_as_one_or_read_from_outside() {
        let tls = |is_ca| SecretSource::TlsSelfSigned {
            hosts: vec![name("ca")],
            days: Spanned::bare(10),
            is_ca,
        };
        let secret = |data| Secret {
            name: name("ca"),
            data,
            ..Secret::default()
        };
        assert!(holds_ca(&secret(vec![(name("tls"), tls(true))])));
        assert!(!holds_ca(&secret(vec![(name("tls"), tls(false))])));
        assert!(holds_ca(&secret(vec![
            (name("tls.crt"), SecretSource::File(name("ca.crt"))),
            (name("tls.key"), SecretSource::Env(name("CA_KEY"))),
        ])));
    }

    #[test]
    fn every_template_and_cycle_problem_is_reported() {
        let mut app = App::default();
        app.secrets.push(Secret {
            name: name("db"),
            data: vec![
                (
                    name("password"),
                    SecretSource::Generated {
                        length: Spanned::bare(32),
                    },
                ),
                (name("url"), SecretSource::Template(name("{pasword}"))),
                (name("a"), SecretSource::Template(name("{b}"))),
                (name("b"), SecretSource::Template(name("{a}"))),
                (name("ok"), SecretSource::Template(name("{password}/{url}"))),
            ],
            ..Secret::default()
        });
        let diags = crate::validate::validate(&app);
        let codes: Vec<&str> = diags
            .iter()
            .filter(|d| d.code == Code::SecretTemplateKey)
            .map(|d| d.message.as_str())
            .collect();
        assert_eq!(codes.len(), 3, "{codes:?}");
        assert!(codes.iter().any(|m| m.contains("`{pasword}`")), "{codes:?}");
    }
}
