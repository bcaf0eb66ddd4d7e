//! Lowering a secret key's source: `from_env("VAR")`, `from_file("path")`, `generated(length: N)` (the older
//! spelling of `generate(random(N))`) and `generate(GENERATOR)` — `random(N)`,
//! `tls_self_signed(hosts: […], days: D, ca: true)`, `tls_signed_by(CA, hosts: […], days: D)`,
//! `template("…{key}…")`. Shapes are checked here; hosts, days, template keys and the CA by
//! `piceli_core::validate`.

use super::Lower;
use crate::ast::{Call, Value};
use piceli_core::Code;
use piceli_core::model::SecretSource;
use piceli_core::rules::did_you_mean;
use piceli_core::spanned::{Name, Spanned};

/// The functions a secret key's value may call.
const SOURCES: &[&str] = &["from_env", "from_file", "generate", "generated"];

/// The generators of `generate(…)`, each with an example.
const GENERATORS: &[(&str, &str)] = &[
    ("random", "generate(random(32))"),
    (
        "tls_self_signed",
        "generate(tls_self_signed(hosts: [\"db\"], days: 365))",
    ),
    (
        "tls_signed_by",
        "generate(tls_signed_by(ca, hosts: [\"db\"], days: 365))",
    ),
    (
        "template",
        "generate(template(\"postgres://app:{password}@db/app\"))",
    ),
];

/// The days a certificate is valid when `days:` is not given.
const DEFAULT_DAYS: i64 = 365;

/// The source of the key `key` (`desc`: where it is, for messages); `None` when reported.
pub(super) fn source(lw: &mut Lower, v: &Value, key: &Name, desc: &str) -> Option<SecretSource> {
    let call = lw.call(v, SOURCES, "from_env(\"API_KEY\")")?;
    match call.name.text.as_str() {
        "generated" => {
            let mut nf = lw.named(call, desc);
            let length = match nf.take("length") {
                Some(l) => lw.int(l, format!("{desc} › length")),
                None => Some(Spanned::new(
                    32,
                    lw.loc(call.sp, format!("{desc} › length")),
                )),
            };
            nf.finish(lw, &["length"]);
            random(lw, call, length?)
        }
        "generate" => generate(lw, call, key, desc),
        kind => {
            let example = if kind == "from_env" {
                "from_env(\"API_KEY\")"
            } else {
                "from_file(\"secrets/key.pem\")"
            };
            let arg = lw.arg(call, 0, "where the value comes from", example)?;
            let text = lw.str(arg, desc)?;
            if kind == "from_env" {
                if let Err(e) = piceli_core::rules::env_var_name(&text.v) {
                    lw.fail(Code::InvalidEnvName, arg.sp(), e.message, e.help);
                }
                Some(SecretSource::Env(text))
            } else {
                Some(SecretSource::File(text))
            }
        }
    }
}

/// Random text of `length` characters (8 to 4096).
fn random(lw: &mut Lower, call: &Call, length: Spanned<i64>) -> Option<SecretSource> {
    if !(8..=4096).contains(&length.v) {
        lw.fail(
            Code::BadBounds,
            call.sp,
            format!("a generated secret of length {}", length.v),
            "use a length from 8 to 4096",
        );
    }
    Some(SecretSource::Generated { length })
}

/// `generate(GENERATOR)`.
fn generate(lw: &mut Lower, call: &Call, key: &Name, desc: &str) -> Option<SecretSource> {
    let names: Vec<&str> = GENERATORS.iter().map(|(n, _)| *n).collect();
    let help = || {
        format!(
            "use one of: {}",
            GENERATORS
                .iter()
                .map(|(_, e)| format!("`{e}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    lw.max_args(call, 1, "generate(random(32))");
    let Some(Value::Call(g)) = call.args.first() else {
        let sp = call.args.first().map(Value::sp).unwrap_or(call.sp);
        lw.fail(
            Code::SecretGenerator,
            sp,
            "`generate(…)` takes a generator",
            help(),
        );
        return None;
    };
    if !call.named.is_empty() {
        lw.fail(
            Code::SecretGenerator,
            call.named[0].0.sp,
            "`generate(…)` takes the generator alone",
            "put the arguments in the generator: `generate(tls_self_signed(hosts: [\"db\"], days: 365))`",
        );
    }
    let desc = format!("{desc} › {}", g.name.text);
    match g.name.text.as_str() {
        "random" => {
            lw.max_args(g, 1, "random(32)");
            let nf = lw.named(g, &desc);
            nf.finish(lw, &[]);
            let Some(n) = g.args.first() else {
                lw.fail(
                    Code::SecretGenerator,
                    g.sp,
                    "`random(…)` needs the number of characters",
                    "write `random(32)` (8 to 4096 characters from `A-Z a-z 0-9`)",
                );
                return None;
            };
            let length = lw.int(n, format!("{desc} › length"))?;
            random(lw, g, length)
        }
        "tls_self_signed" => {
            lw.max_args(g, 0, "tls_self_signed(hosts: [\"db\"], days: 365)");
            let mut nf = lw.named(g, &desc);
            let hosts = hosts(lw, g, nf.take("hosts"), &desc);
            let days = days(lw, g, nf.take("days"), &desc);
            let is_ca = match nf.take("ca") {
                Some(v) => lw.bool(v)?,
                None => false,
            };
            nf.finish(lw, &["hosts", "days", "ca"]);
            Some(SecretSource::TlsSelfSigned {
                hosts: hosts?,
                days: days?,
                is_ca,
            })
        }
        "tls_signed_by" => {
            lw.max_args(g, 1, "tls_signed_by(ca, hosts: [\"db\"], days: 365)");
            let Some(ca) = g.args.first() else {
                lw.fail(
                    Code::SecretGenerator,
                    g.sp,
                    "`tls_signed_by(…)` needs the secret holding the CA",
                    format!(
                        "write `tls_signed_by(ca, hosts: [\"{}\"], days: 365)` with `ca` a secret of the app",
                        key.v
                    ),
                );
                return None;
            };
            let ca = lw.name(ca, format!("{desc} › ca"));
            let mut nf = lw.named(g, &desc);
            let hosts = hosts(lw, g, nf.take("hosts"), &desc);
            let days = days(lw, g, nf.take("days"), &desc);
            nf.finish(lw, &["hosts", "days"]);
            Some(SecretSource::TlsSignedBy {
                ca: ca?,
                hosts: hosts?,
                days: days?,
            })
        }
        "template" => {
            lw.max_args(g, 1, "template(\"postgres://app:{password}@db/app\")");
            let nf = lw.named(g, &desc);
            nf.finish(lw, &[]);
            let Some(text) = g.args.first() else {
                lw.fail(
                    Code::SecretGenerator,
                    g.sp,
                    "`template(…)` needs its text",
                    "write `template(\"postgres://app:{password}@db/app\")`: `{key}` is the value of another key of this secret",
                );
                return None;
            };
            if !matches!(text, Value::Str(_)) {
                lw.fail(
                    Code::SecretGenerator,
                    text.sp(),
                    "a template is a string literal",
                    "write the text in the source: `template(\"postgres://app:{password}@db/app\")` (the values come from the secret's keys)",
                );
                return None;
            }
            let t = lw.str(text, format!("{desc} › text"))?;
            Some(SecretSource::Template(t))
        }
        other => {
            let help = match did_you_mean(other, names.iter().copied()) {
                Some(s) => format!(
                    "did you mean `{}`?",
                    GENERATORS
                        .iter()
                        .find(|(n, _)| *n == s)
                        .map(|(_, e)| *e)
                        .unwrap_or(s)
                ),
                None => help(),
            };
            lw.fail(
                Code::SecretGenerator,
                g.name.sp,
                format!("unknown secret generator `{other}`"),
                help,
            );
            None
        }
    }
}

/// `hosts: ["db", …]`, required.
fn hosts(lw: &mut Lower, g: &Call, v: Option<&Value>, desc: &str) -> Option<Vec<Spanned<String>>> {
    let Some(v) = v else {
        lw.fail(
            Code::SecretGenerator,
            g.sp,
            format!("`{}(…)` needs the certificate's hosts", g.name.text),
            format!(
                "add `hosts: [\"db\", \"db.shop.svc\"]` (DNS names or IP addresses): `{}(hosts: [\"db\"], days: 365)`",
                g.name.text
            ),
        );
        return None;
    };
    Some(lw.str_list(v, &format!("{desc} › hosts")))
}

/// `days: D`, 365 when not given.
fn days(lw: &mut Lower, g: &Call, v: Option<&Value>, desc: &str) -> Option<Spanned<i64>> {
    match v {
        Some(v) => lw.int(v, format!("{desc} › days")),
        None => Some(Spanned::new(
            DEFAULT_DAYS,
            lw.loc(g.sp, format!("{desc} › days")),
        )),
    }
}
