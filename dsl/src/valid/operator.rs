//! Lowering `operator NAME { … }` and the `validate`/`mutate` items; what the expansion needs to register
//! each webhook's handlers (their Rust paths and the resource's k8s-openapi type) is kept beside the model.

use super::keys::{self, Key, Reading};
use super::{Fields, Lower};
use crate::ast::{Item, Sp, Value};
use piceli_core::Code;
use piceli_core::model::{Operator, OperatorTls, Webhook, WebhookKind, WebhookResource};
use piceli_core::rules::did_you_mean;
use piceli_core::spanned::Spanned;

/// One webhook as the expansion registers it.
pub struct WebhookCode {
    /// Validating or mutating.
    pub kind: WebhookKind,
    /// The name (the path's last segment).
    pub name: String,
    /// The first resource as written, resolved by the expansion (after validation accepted it): what a
    /// webhook that is not generic admits.
    pub resource: String,
    /// Where each resource is written.
    pub resource_sps: Vec<Sp>,
    /// On a list of resources or a wildcard: the handlers take `Request<DynamicObject>`.
    pub generic: bool,
    /// The app's `custom_resource` type the resource names, when it is not a 1.33 resource.
    pub object: Option<syn::Path>,
    /// Each of the app's custom resources the webhook names: its type, the name as written and its
    /// token, compared at compile time with the CRD name a `#[piceli::custom_resource]` type defines.
    pub custom_names: Vec<(syn::Path, String, Sp)>,
    /// The handlers as written, each with its own span.
    pub handlers: Vec<syn::Path>,
    /// `failure: ignore`.
    pub ignore_failures: bool,
    /// The configuration's timeoutSeconds.
    pub timeout_seconds: i64,
}

/// `operator NAME { image: "…", replicas: 2, tls: cert_manager(issuer: self_signed) }`.
pub fn operator(lw: &mut Lower, item: &Item) {
    let Some(name) = lw.item_name(item) else {
        return;
    };
    if lw.app.operator.is_some() {
        lw.fail(
            Code::WebhookWithoutOperator,
            item.name.as_ref().map(|n| n.sp).unwrap_or(item.keyword.sp),
            "the app declares a second operator",
            "one binary runs one operator: keep one `operator` item",
        );
        return;
    }
    let owner = format!("operator {}", name.v);
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    let mut r = Reading::<Op>::new(owner);
    r.item.operator = Operator {
        name,
        replicas: Spanned::bare(1),
        ..Operator::default()
    };
    r.item.sp = Some(item.name.as_ref().map(|n| n.sp).unwrap_or(item.keyword.sp));
    keys::read(lw, &mut f, OPERATOR, &mut r);
    f.finish_keys(lw, OPERATOR);
    lw.app.operator = Some(r.item.operator);
}

/// `operator NAME { … }`: its keys and their readers.
pub const OPERATOR: &[Key<Reading<Op>>] = &[
    Key::new(
        "image",
        "the operator's image (this binary: `build(package: …)`, or pinned by digest)",
        Some(operator_image),
    ),
    Key::new(
        "replicas",
        "how many pods serve the webhooks and controllers",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v
                && let Some(n) = lw.int(v, format!("{} › {key}", r.owner))
            {
                r.item.operator.replicas = n;
            }
        }),
    ),
    Key::new(
        "env",
        "the `serve` container's environment, as a container's `env:` (literals, `config(MAP.KEY)`, `secret(SECRET.KEY)`, `field(\"…\")`), after the `POD_NAME`/`POD_NAMESPACE` the render sets (not settable: PCL0006); e.g. `OTEL_EXPORTER_OTLP_ENDPOINT`",
        Some(|lw, r, _, _, v| {
            if let Some(v) = v {
                r.item.operator.env = super::container::env(lw, v, &r.owner);
            }
        }),
    ),
    Key::new(
        "tls",
        "`cert_manager(issuer: self_signed)`, `cert_manager(cluster_issuer: \"NAME\")`, `secret(NAME)` or `self_managed` (the operator's own CA)",
        Some(|lw, r, _, _, v| {
            if let Some(v) = v
                && let Some(tls) = tls(lw, v, &r.owner)
            {
                r.item.operator.tls = tls;
            }
        }),
    ),
];

/// An operator being read, and its name's token (where a missing image is reported).
#[derive(Default)]
pub struct Op {
    operator: Operator,
    sp: Option<Sp>,
}

/// `image:` of the operator (required): this binary built, pinned by digest, or `unpinned(…)`.
fn operator_image(
    lw: &mut Lower,
    r: &mut Reading<Op>,
    f: &mut Fields,
    key: &'static str,
    v: Option<&Value>,
) {
    let owner = &r.owner;
    let op = &mut r.item.operator;
    match v {
        Some(Value::Call(call)) if call.name.text == "unpinned" => {
            op.unpinned = true;
            lw.max_args(call, 1, "unpinned(\"ghcr.io/acme/guard:1.0\")");
            if let Some(v) = lw.arg(call, 0, "the image", "unpinned(\"ghcr.io/acme/guard:1.0\")")
                && let Some(s) = lw.str(v, format!("{owner} › {key}"))
            {
                op.image = s;
            }
        }
        Some(Value::Call(call)) if call.name.text == "build" => {
            op.image = super::build::build(lw, call, owner, true);
        }
        Some(v) => {
            if let Some(s) = lw.str(v, format!("{owner} › {key}")) {
                op.image = s;
            }
        }
        None if f.misspells(key, |k| keys::find(OPERATOR, k).is_some()) => {}
        None => {
            if let Some(sp) = r.item.sp {
                lw.fail(
                    Code::MissingKey,
                    sp,
                    format!("{owner} has no image"),
                    "add `image: \"registry/repo:tag@sha256:…\"` (the image of this app's binary)",
                );
            }
        }
    }
}

/// `cert_manager(issuer: self_signed)`, `cert_manager(cluster_issuer: "corp-ca")`, `secret(NAME)` or
/// `self_managed`.
fn tls(lw: &mut Lower, v: &Value, owner: &str) -> Option<OperatorTls> {
    const EXAMPLE: &str = "cert_manager(issuer: self_signed)";
    if let Value::Path(p) = v
        && p.len() == 1
        && p[0].text == "self_managed"
    {
        return Some(OperatorTls::SelfManaged);
    }
    let call = lw.call(v, &["cert_manager", "secret"], EXAMPLE)?;
    if call.name.text == "secret" {
        lw.max_args(call, 1, "secret(guard-tls)");
        let arg = lw.arg(call, 0, "the Secret's name", "secret(guard-tls)")?;
        return lw
            .name(arg, format!("{owner} › tls › secret"))
            .map(OperatorTls::Secret);
    }
    lw.max_args(call, 0, EXAMPLE);
    let mut args = lw.named(call, &format!("{owner} › tls"));
    let issuer = args.take("issuer");
    let cluster_issuer = args.take("cluster_issuer");
    args.finish(lw, &["issuer", "cluster_issuer"]);
    match (issuer, cluster_issuer) {
        (Some(Value::Path(p)), None) if p.len() == 1 && p[0].text == "self_signed" => {
            Some(OperatorTls::SelfSigned)
        }
        (Some(other), None) => {
            lw.fail(
                Code::InvalidValue,
                other.sp(),
                "`issuer:` takes `self_signed`",
                "write `cert_manager(issuer: self_signed)`, or name a ClusterIssuer with `cert_manager(cluster_issuer: \"corp-ca\")`",
            );
            None
        }
        (None, Some(v)) => lw
            .str(v, format!("{owner} › tls › cluster_issuer"))
            .map(OperatorTls::ClusterIssuer),
        (Some(_), Some(v)) => {
            lw.fail(
                Code::InvalidValue,
                v.sp(),
                "`cert_manager(…)` takes `issuer:` or `cluster_issuer:`, not both",
                "keep one of them",
            );
            None
        }
        (None, None) => {
            lw.fail(
                Code::MissingKey,
                call.sp,
                "`cert_manager(…)` does not say which issuer signs the certificate",
                format!("write `{EXAMPLE}` or `cert_manager(cluster_issuer: \"corp-ca\")`"),
            );
            None
        }
    }
}

/// The options of `validate`/`mutate … { … }`: their keys and their readers.
pub const WEBHOOK_OPTIONS: &[Key<Reading<Webhook>>] = &[
    Key::new(
        "failure",
        "`fail` (default) or `ignore` when the webhook cannot answer",
        Some(|lw, r, _, _, v| match v {
            Some(Value::Path(p))
                if p.len() == 1 && (p[0].text == "fail" || p[0].text == "ignore") =>
            {
                r.item.ignore_failures = p[0].text == "ignore";
            }
            Some(other) => {
                let help = match other {
                    Value::Path(p) if p.len() == 1 => {
                        match did_you_mean(&p[0].text.to_ascii_lowercase(), ["fail", "ignore"]) {
                            Some(s) => format!("did you mean `{s}`?"),
                            None => "write `failure: fail` or `failure: ignore`".into(),
                        }
                    }
                    _ => "write `failure: fail` or `failure: ignore`".into(),
                };
                lw.fail(
                    Code::WebhookOption,
                    other.sp(),
                    "`failure:` is `fail` or `ignore`",
                    help,
                );
            }
            None => {}
        }),
    ),
    Key::new(
        "timeout",
        "seconds the API server waits, 1–30 (default 10)",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v {
                r.item.timeout = lw.int(v, format!("{} › {key}", r.owner));
            }
        }),
    ),
    Key::new(
        "namespaces",
        "labels a namespace must have (`namespaceSelector`)",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v {
                r.item.namespaces = lw.labels(v, &format!("{} › {key}", r.owner));
            }
        }),
    ),
    Key::new(
        "objects",
        "labels an object must have (`objectSelector`)",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v {
                r.item.objects = lw.labels(v, &format!("{} › {key}", r.owner));
            }
        }),
    ),
];

/// `validate NAME on RESOURCE (OPS) [{ OPTIONS }] => HANDLER;` and the same for `mutate`.
pub fn webhook(lw: &mut Lower, item: &Item) {
    let kind = match item.keyword.text.as_str() {
        "mutate" => WebhookKind::Mutate,
        _ => WebhookKind::Validate,
    };
    let kw = kind.keyword();
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let Some(tail) = &item.webhook else {
        lw.fail(
            Code::MissingKey,
            item.name.as_ref().map(|n| n.sp).unwrap_or(item.keyword.sp),
            format!("`{kw} {}` does not say what it admits", name.v),
            format!(
                "write `{kw} {} on deployments.apps (CREATE, UPDATE) => policy::handler;`",
                name.v
            ),
        );
        return;
    };
    if let Some(body) = &item.body {
        lw.fail(
            Code::Syntax,
            body.sp(),
            "a webhook's options go before `=>`",
            format!(
                "write `{kw} {} on RESOURCE (OPS) {{ failure: ignore }} => policy::handler;`",
                name.v
            ),
        );
    }
    let owner = format!("{kw} {}", name.v);
    let resources = tail
        .resources
        .iter()
        .map(|r| {
            let at = lw.loc(r.sp, format!("{owner} › resource"));
            WebhookResource::new(Spanned::new(r.text.clone(), at))
        })
        .collect();
    let mut hook = Webhook {
        kind,
        resources,
        generic: tail.resource_list.is_some()
            || tail.resources.iter().any(|r| r.text.contains('*')),
        name,
        ..Webhook::default()
    };
    if let (Some(list), true) = (tail.resource_list, tail.resources.is_empty()) {
        lw.fail(
            Code::UnknownResource,
            list,
            format!("{owner} lists no resource"),
            "list what it admits, e.g. `[configmaps, secrets]`",
        );
    }
    if tail.operations.is_empty() {
        lw.fail(
            Code::InvalidOperation,
            tail.operations_sp,
            format!("{owner} lists no operation"),
            "list what it admits, e.g. `(CREATE, UPDATE)`",
        );
    }
    for op in &tail.operations {
        let at = lw.loc(op.sp, format!("{owner} › operations"));
        hook.operations.push(Spanned::new(op.text.clone(), at));
    }
    if let Some(options) = &tail.options {
        let value = Value::Map(options.clone());
        let mut f = Fields::of(lw, Some(&value), format!("{owner} options"));
        let mut r = Reading::new(owner.clone());
        r.item = std::mem::take(&mut hook);
        keys::read(lw, &mut f, WEBHOOK_OPTIONS, &mut r);
        f.finish_keys(lw, WEBHOOK_OPTIONS);
        hook = r.item;
    }
    if kind == WebhookKind::Validate
        && let Some(list) = tail.list
    {
        lw.fail(
            Code::WebhookHandler,
            list,
            format!("validating webhook `{}` lists its handlers", hook.name.v),
            "a validating webhook has one handler: write `=> policy::handler`; only `mutate` takes a list (a composite)",
        );
    }
    if tail.handlers.is_empty() {
        let sp = tail.list.unwrap_or(item.keyword.sp);
        lw.fail(
            Code::WebhookHandler,
            sp,
            format!("{owner} has no handler"),
            "name at least one: `=> [policy::add_team, policy::add_tier]`",
        );
    }
    // A validating webhook written with a list was reported above: keep its first handler only, so the
    // same problem is not reported again by the model's validation.
    let keep = match (kind, tail.list) {
        (WebhookKind::Validate, Some(_)) => 1,
        _ => tail.handlers.len(),
    };
    for path in tail.handlers.iter().take(keep) {
        let text = quote::quote!(#path).to_string().replace(' ', "");
        let sp = path_sp(path);
        let at = lw.loc(sp, format!("{owner} › handler"));
        hook.handlers.push(Spanned::new(text, at));
    }
    lw.webhook_code(WebhookCode {
        kind,
        name: hook.name.v.clone(),
        resource: tail
            .resources
            .first()
            .map(|r| r.text.clone())
            .unwrap_or_default(),
        resource_sps: tail.resources.iter().map(|r| r.sp).collect(),
        generic: hook.generic,
        object: None,
        custom_names: Vec::new(),
        handlers: tail.handlers.clone(),
        ignore_failures: hook.ignore_failures,
        timeout_seconds: hook.timeout_seconds(),
    });
    lw.app.webhooks.push(hook);
}

/// From a path's first segment to its last.
fn path_sp(p: &syn::Path) -> Sp {
    let first = p
        .segments
        .first()
        .map(|s| s.ident.span())
        .unwrap_or_else(proc_macro2::Span::call_site);
    let last = p.segments.last().map(|s| s.ident.span()).unwrap_or(first);
    Sp {
        start: first,
        end: last,
    }
}
