//! The DSL's passes tested as a library: sources parsed with `syn::parse_str`, checked and expanded
//! without a compiler run (the trybuild cases in `tests/ui` show the same errors as rustc prints them).

use crate::ast::Input;
use crate::valid::{self, Checked};

const IMAGE: &str = "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d";

/// An app of `items` after `app demo;`, its image pinned.
pub(crate) fn source(items: &str) -> String {
    format!(
        "app demo; {}",
        items.replace("IMAGE", &format!("{IMAGE:?}"))
    )
}

/// Parse and check; the errors as their messages, in the order the macro reports them.
pub(crate) fn check(items: &str) -> Result<Checked, Vec<String>> {
    let input: Input = syn::parse_str(&source(items)).map_err(|e| vec![e.to_string()])?;
    valid::check(input, true)
        .map_err(|(errors, _)| errors.iter().map(ToString::to_string).collect())
}

pub(crate) fn errors(items: &str) -> Vec<String> {
    match check(items) {
        Ok(_) => panic!("expected errors from {items}"),
        Err(errors) => errors,
    }
}

#[test]
fn a_small_app_checks_into_its_model() {
    let Ok(checked) = check(
        "deployment web { image: IMAGE, ports: { http: 80 }, replicas: 2 } \
         service web -> web { port: 80 => http }",
    ) else {
        panic!("the app should check")
    };
    assert_eq!(checked.app.name.v, "demo");
    assert_eq!(checked.app.workloads.len(), 1);
    assert_eq!(checked.app.services.len(), 1);
    assert!(checked.dynamics.is_empty());
}

#[test]
fn a_rust_expression_becomes_a_value_filled_at_run_time() {
    let Ok(checked) = check("deployment web { image: IMAGE, replicas: (count()) }") else {
        panic!("the app should check")
    };
    assert_eq!(checked.dynamics.len(), 1);
    assert!(matches!(
        checked.dynamics[0].kind,
        valid::DynamicKind::Int(_)
    ));
}

#[test]
fn every_problem_is_reported_in_one_pass_with_its_code_and_help() {
    let errors = errors(
        "deployment web { image: IMAGE, replicaz: 2, \
           pod: { tolerationz: [] }, \
           container: { securityContext: { runAsUser: \"root\" }, imagePullPolicy: \"Sometimes\" } }",
    );
    let all = errors.join("\n---\n");
    assert_eq!(errors.len(), 4, "{all}");
    assert!(
        all.contains("PCL0025: unknown key `replicaz`") && all.contains("did you mean `replicas`?"),
        "{all}"
    );
    assert!(
        all.contains("PCL0045") && all.contains("did you mean `tolerations`?"),
        "{all}"
    );
    assert!(
        all.contains("runAsUser") && all.contains("integer"),
        "{all}"
    );
    assert!(
        all.contains("imagePullPolicy") && all.contains("IfNotPresent"),
        "{all}"
    );
    assert!(errors.iter().all(|e| e.starts_with("PCL")), "{all}");
    assert!(errors.iter().all(|e| e.contains("\n\nhelp: ")), "{all}");
}

#[test]
fn a_misspelled_image_is_one_error_not_also_a_missing_image() {
    for items in [
        "deployment web { imgae: IMAGE }",
        "deployment web { containers: { web: { imag: IMAGE } } }",
    ] {
        let errors = errors(items);
        assert_eq!(errors.len(), 1, "{items}: {errors:?}");
        assert!(errors[0].contains("did you mean `image`?"), "{}", errors[0]);
    }
    // With no near miss, the missing image is still an error.
    let errors = errors("deployment web { replicas: 2 }");
    assert!(
        errors[0].starts_with("PCL0026: deployment web › container web has no image"),
        "{errors:?}"
    );
}

#[test]
fn a_wrong_port_name_is_one_error_and_no_follow_on() {
    let errors = errors(
        "deployment web { image: IMAGE, ports: { http: 80 } } \
         service web -> web { port: 80 => htp }",
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("PCL0009: `web` exposes no port named `htp`"),
        "{}",
        errors[0]
    );
    assert!(errors[0].contains("did you mean `http`?"), "{}", errors[0]);
}

#[test]
fn labels_on_a_config_map_are_metadata_when_data_is_given() {
    let Ok(checked) =
        check("config_map settings { labels: { tier: \"web\" }, data: { labels: \"x\" } }")
    else {
        panic!("the app should check")
    };
    let json = serde_json::to_value(&checked.app.config_maps[0]).expect("serializes");
    let text = json.to_string();
    assert!(text.contains("\"tier\""), "{text}");
}

#[test]
fn the_expansion_is_a_module_named_after_the_app() {
    let out = crate::app(
        source("deployment web { image: IMAGE }")
            .parse()
            .expect("tokens"),
    );
    let text = out.to_string();
    assert!(text.contains("pub mod demo"), "{text}");
    assert!(!text.contains("compile_error"), "{text}");
}

#[test]
fn errors_expand_to_compile_errors_and_a_fallback_module_so_rustc_adds_none() {
    let out = crate::app(
        source("deployment web { imgae: IMAGE }")
            .parse()
            .expect("tokens"),
    );
    let text = out.to_string();
    assert!(text.contains("compile_error"), "{text}");
    assert!(text.contains("pub mod demo"), "{text}");
    assert!(text.contains("unreachable"), "{text}");
}

#[test]
fn a_syntax_error_has_its_code_and_points_to_the_grammar() {
    let out = crate::app(
        "app demo; deployment web { image \"x\" }"
            .parse()
            .expect("tokens"),
    )
    .to_string();
    assert!(out.contains("PCL0044"), "{out}");
    assert!(out.contains("docs/dsl.md"), "{out}");
}

#[test]
fn rust_expressions_are_typed_assignments_at_their_places_in_the_model() {
    let out = crate::app(
        source(
            "deployment web { image: (image()), replicas: (n()), env: { MODE: (mode()) }, \
               pod: { terminationGracePeriodSeconds: (grace()), tolerations: (gpu()) } } \
             deployment worker { image: IMAGE, env: (common()), args: (flags()) } \
             include objects((extra()));",
        )
        .parse()
        .expect("tokens"),
    );
    let text = out.to_string();
    assert!(!text.contains("compile_error"), "{text}");
    // No fills handed to `load`: it reads the model, and each value is assigned after.
    let load = format!(
        "__private :: load ({}u32 , MODEL , LOCATIONS) ;",
        piceli_core::model::MODEL_FORMAT
    );
    assert!(text.contains(&load), "{text}");
    for expected in [
        "a . workloads . get_mut (0) ? . containers . get_mut (0) ? . image) , :: piceli :: __private :: string (image ())",
        "| a | a . workloads . get_mut (0) ? . replicas . as_mut () , :: piceli :: __private :: int (n ())",
        ":: piceli :: __private :: model :: EnvValue :: Literal (x) => x",
        "Some (& mut a . workloads . get_mut (0) ? . pod) , :: piceli :: __private :: int (grace ())",
        "Some (& mut a . workloads . get_mut (0) ? . pod) , :: piceli :: __private :: json (gpu ())",
        "| a | a . workloads . get_mut (1) ? . containers . get_mut (0) , :: piceli :: __private :: env (common ())",
        "| a | a . includes . get_mut (0) , :: piceli :: __private :: objects (extra ())",
        ":: piceli :: __private :: assign_container (& mut app , \"worker\" , \"worker\"",
    ] {
        assert!(text.contains(expected), "{expected}\n\nin\n\n{text}");
    }
}

#[test]
fn an_app_without_rust_expressions_assigns_nothing() {
    let out = crate::app(
        source("deployment web { image: IMAGE, replicas: 2 }")
            .parse()
            .expect("tokens"),
    )
    .to_string();
    assert!(!out.contains("__private :: assign"), "{out}");
}

#[test]
fn items_read_by_their_tables_keep_the_order_and_wording_of_their_errors() {
    let errors = errors(
        "deployment web { image: IMAGE } \
         autoscaler web -> web { max: 3, cpu: \"high\", labels: { team: 1.5 }, \
           spec: { minReplicas: 2, maxReplicas: 4 }, mni: 1 }",
    );
    let all = errors.join("\n---\n");
    assert_eq!(errors.len(), 5, "{all}");
    assert!(
        errors[0].starts_with("PCL0026: autoscaler web has no `min`"),
        "{all}"
    );
    assert!(errors[0].contains("add `min: N`"), "{all}");
    assert!(
        errors[1].contains("expected a number, found"),
        "the cpu: {all}"
    );
    assert!(errors[2].contains("expected a string"), "the label: {all}");
    assert!(
        errors[3].contains("`maxReplicas` in autoscaler web › spec is set by Piceli's own key")
            && errors[3].contains("set it with `max:`"),
        "{all}"
    );
    assert!(
        errors[4].starts_with("PCL0025: unknown key `mni` in autoscaler web")
            && errors[4].contains("did you mean `min`?"),
        "{all}"
    );
    // The other two items read by their tables; then the meaning problems (`validate`).
    let errors = self::errors(
        "deployment web { image: IMAGE } \
         disruption_budget web -> web { min_available: [1], spek: {} } \
         service_account bot { automount: \"yes\", spec: { automountServiceAccountToken: true } }",
    );
    let all = errors.join("\n---\n");
    assert_eq!(errors.len(), 5, "{all}");
    assert!(
        errors[0].starts_with("PCL0027: expected a string, found a list"),
        "{all}"
    );
    assert!(
        errors[1].contains("unknown key `spek`") && errors[1].contains("did you mean `spec`?"),
        "{all}"
    );
    assert!(errors[2].contains("`true` or `false`"), "{all}");
    assert!(errors[3].contains("set it with `automount:` only"), "{all}");
    assert!(
        errors[4].contains("sets neither min_available nor max_unavailable"),
        "{all}"
    );
}

#[test]
fn rbac_items_read_by_their_tables_keep_the_order_and_wording_of_their_errors() {
    let errors = errors(
        "role reader { rules: [rule(groups: [\"\"], resourcs: [\"pods\"]), 7], labels: { a: [1] }, rulez: [] } \
         role_binding readers { subjects: [user(7), group(\"devs\")], annotations: { b: [2] }, rol: reader }",
    );
    let all = errors.join("\n---\n");
    assert_eq!(errors.len(), 9, "{all}");
    for (i, expected) in [
        "unknown key `resourcs` in role reader › rule",
        "expected a call like",
        "expected a string, found a list",
        "unknown key `rulez` in role reader",
        "role_binding readers has no role",
        "expected a string, found a number",
        "expected a string, found a list",
        "unknown key `rol` in role_binding readers",
        "a rule of `reader` has no verbs or no resources",
    ]
    .iter()
    .enumerate()
    {
        assert!(errors[i].contains(expected), "{i}: {expected}\n\n{all}");
    }
}

#[test]
fn a_pvc_read_by_its_table_keeps_the_order_and_wording_of_its_errors() {
    let errors = errors(
        "pvc data { access: [7], class: 3, labels: { a: [1] }, \
           spec: { accessModes: [\"ReadWriteOnce\"] }, stroage: \"1Gi\" }",
    );
    let all = errors.join("\n---\n");
    // `stroage` is reported once, as an unknown key offering `storage`: no follow-on "no storage size".
    assert_eq!(errors.len(), 5, "{all}");
    for (i, expected) in [
        "expected a string, found a number",
        "expected a string, found a number",
        "expected a string, found a list",
        "`accessModes` in pvc data › spec is set by Piceli's own key",
        "PCL0025: unknown key `stroage` in pvc data",
    ]
    .iter()
    .enumerate()
    {
        assert!(errors[i].contains(expected), "{i}: {expected}\n\n{all}");
    }
}

#[test]
fn a_missing_storage_size_is_reported_unless_a_key_misspells_it() {
    let errors = errors("pvc data { access: [\"ReadWriteOnce\"] }");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("PCL0026: pvc data has no storage size"),
        "{errors:?}"
    );
    let errors = errors_of_claims("{ data: { stroage: \"1Gi\" } }");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("unknown key `stroage`"), "{errors:?}");
    assert!(errors[0].contains("did you mean `storage`?"), "{errors:?}");
    let errors = errors_of_claims("{ data: { class: \"fast\" } }");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("has no storage size"), "{errors:?}");
}

/// The errors of a StatefulSet whose `volume_claims` are `claims`.
fn errors_of_claims(claims: &str) -> Vec<String> {
    errors(&format!(
        "stateful_set db {{ image: IMAGE, volume_claims: {claims}, mounts: {{ \"/data\": data }} }}"
    ))
}

#[test]
fn a_network_policy_read_by_its_table_keeps_the_order_and_wording_of_its_errors() {
    let errors = errors(
        "deployment web { image: IMAGE, ports: { http: 80 } } \
         network_policy web -> web { from: [namespace(7), [1]], ports: [true], \
           annotations: { a: [1] }, spec: { ingress: [] }, form: [] }",
    );
    let all = errors.join("\n---\n");
    for (i, expected) in [
        "expected a name, found a list",
        "expected a port name or number",
        "expected a string, found a list",
        "`ingress` in network_policy web › spec is set by Piceli's own key",
        "PCL0025: unknown key `form` in network_policy web",
    ]
    .iter()
    .enumerate()
    {
        assert!(
            errors.get(i).is_some_and(|e| e.contains(expected)),
            "{i}: {expected}\n\n{all}"
        );
    }
    assert_eq!(errors.len(), 5, "{all}");
}

#[test]
fn webhook_options_read_by_their_table_keep_the_order_and_wording_of_their_errors() {
    let errors = errors(
        "operator guard { image: IMAGE, tls: cert_manager(issuer: self_signed) } \
         validate no-latest-tag on deployments.apps (CREATE) \
           { failure: ignor, timeout: \"x\", objects: [1], namespace: { team: \"a\" } } \
           => policy::no_latest_tag;",
    );
    let all = errors.join("\n---\n");
    for (i, expected) in [
        "`failure:` is `fail` or `ignore`",
        "expected a number, found a string",
        "expected a map",
        "unknown key `namespace` in validate no-latest-tag options",
    ]
    .iter()
    .enumerate()
    {
        assert!(
            errors.get(i).is_some_and(|e| e.contains(expected)),
            "{i}: {expected}\n\n{all}"
        );
    }
    assert!(errors[0].contains("did you mean `ignore`?"), "{all}");
    assert!(errors[3].contains("did you mean `namespaces`?"), "{all}");
}

#[test]
fn an_operator_read_by_its_table_keeps_the_order_and_wording_of_its_errors() {
    let misspelt = errors("operator guard { imgae: IMAGE, replicas: \"two\", tls: tls(x) }");
    let all = misspelt.join("\n---\n");
    for (i, expected) in [
        "expected a number, found a string",
        "unknown function `tls`",
        "unknown key `imgae` in operator guard",
    ]
    .iter()
    .enumerate()
    {
        assert!(
            misspelt.get(i).is_some_and(|e| e.contains(expected)),
            "{i}: {expected}\n\n{all}"
        );
    }
    let missing = errors("operator guard { replicas: 2, tlz: 1 }");
    let all = missing.join("\n---\n");
    assert!(missing[0].contains("operator guard has no image"), "{all}");
    assert!(missing[1].contains("unknown key `tlz`"), "{all}");
}

#[test]
fn controller_options_read_by_their_table_keep_the_order_and_wording_of_their_errors() {
    let errors = errors(
        "operator lamps { image: IMAGE } \
         controller b on configmaps { labels: { a: [1] }, namespaces: [Team_A, 7], every: \"5 minutes\", \
           writes: [status, 3], period: \"5m\" } => ops::reconcile;",
    );
    let all = errors.join("\n---\n");
    for (i, expected) in [
        "expected a string, found a list",
        "`Team_A` is not a namespace name",
        "expected a name, found a number",
        "`every: \"5 minutes\"` is not a duration",
        "expected a resource name, found a number",
        "unknown key `period` in controller b options",
    ]
    .iter()
    .enumerate()
    {
        assert!(
            errors.get(i).is_some_and(|e| e.contains(expected)),
            "{i}: {expected}\n\n{all}"
        );
    }
}

#[test]
fn services_read_by_their_tables_keep_the_order_and_wording_of_their_errors() {
    let errors = errors(
        "deployment web { image: IMAGE, ports: { http: 80 } } \
         service web -> web { port: \"x\", ports: { a: 81 => [1] }, type: clusterip, node_ports: { b: 30080 }, \
           access: forward(port: 7), labels: { a: [1] }, spec: { type: \"NodePort\" }, prots: {} } \
         service ext { annotations: { a: [1] }, spec: { type: \"ExternalName\" }, speck: 1 } \
         service bad { port: 80, spec: {} }",
    );
    let all = errors.join("\n---\n");
    for (i, expected) in [
        "expected a number, found a string",
        "expected a port name or number, found a list",
        "web has no port named `b`",
        "`clusterip` is not a Service type",
        "a forward needs its local port",
        "expected a name, found a number",
        "expected a string, found a list",
        "`type` in service web › spec is set by Piceli's own key",
        "unknown key `prots` in service web",
        "expected a string, found a list",
        "unknown key `speck` in service ext",
        "`service bad` does not say which workload it is for",
    ]
    .iter()
    .enumerate()
    {
        assert!(
            errors.get(i).is_some_and(|e| e.contains(expected)),
            "{i}: {expected}\n\n{all}"
        );
    }
    assert!(errors[11].contains("`port:` routes to"), "{all}");
}

#[test]
fn the_selector_form_read_by_its_table_keeps_the_order_and_wording_of_its_errors() {
    let errors = errors(
        "deployment web { image: IMAGE } \
         network_policy a -> web { pods: {}, from: [web] } \
         network_policy b { types: [1], ingress: {}, egress: [{ tu: [] }], labels: { a: [1] }, \
           spec: { policyTypes: [] }, egres: [] }",
    );
    let all = errors.join("\n---\n");
    for (i, expected) in [
        "network_policy a selects its pods with `pods:`, so it takes no `-> WORKLOAD`",
        "`from:` belongs to the workload form",
        "expected a string, found a number",
        "expected a list of rules",
        "unknown key `tu`",
        "expected a string, found a list",
        "`policyTypes` in network_policy b › spec is set by Piceli's own key",
        "unknown key `egres` in network_policy b",
        "network_policy b does not say which pods it applies to",
    ]
    .iter()
    .enumerate()
    {
        assert!(all.contains(expected), "{i}: {expected}\n\n{all}");
    }
    let first = |text: &str| errors.iter().position(|e| e.contains(text));
    assert!(
        first("does not say which pods") < first("expected a string, found a number"),
        "{all}"
    );
    assert!(
        first("set by Piceli's own key") < first("unknown key `egres`"),
        "{all}"
    );
}

#[test]
fn config_maps_and_secrets_read_by_their_tables_keep_their_errors() {
    // `data:` that is not a map: that error alone (nothing else of the item is read).
    let errors = errors(
        "config_map a { data: 1, labels: { x: [1] }, lables: {} } \
         secret b { type: 7, data: [], annotations: { y: [2] } }",
    );
    let all = errors.join("\n---\n");
    assert_eq!(errors.len(), 3, "{all}");
    assert!(errors[0].contains("expected a map of data keys"), "{all}");
    assert!(
        errors[1].contains("expected a string, found a number"),
        "{all}"
    );
    assert!(errors[2].contains("expected a map of data keys"), "{all}");
    // The long form: a key given twice in `data:`, the metadata, unknown keys, then the data values.
    let errors = self::errors(
        "config_map a { data: { k: 1, k: 2, f: file(7) }, labels: { x: [1] }, lables: {} } \
         secret b { labels: { team: \"a\" }, token: \"literal\", type: 3 }",
    );
    let all = errors.join("\n---\n");
    for (i, expected) in [
        "`k` is given twice in config_map a › data",
        "expected a string, found a list",
        "unknown key `lables` in config_map a",
        "expected a string, found a number",
        "expected a string, found a number",
        "`labels` in secret b would be a data key",
        "the value of secret key `token` is written in the source",
    ]
    .iter()
    .enumerate()
    {
        assert!(
            errors.get(i).is_some_and(|e| e.contains(expected)),
            "{i}: {expected}\n\n{all}"
        );
    }
}
