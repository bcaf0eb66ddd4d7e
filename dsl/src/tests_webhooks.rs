//! Webhooks lowered and expanded: generic ones on a list of resources or a wildcard (typed by
//! `DynamicObject`), and the compile-time comparison of a custom resource's name with its type's CRD name.

use crate::expand::expand;
use crate::tests::{check, errors};

const OPERATOR: &str = "operator guard { image: IMAGE } ";

fn expanded(items: &str) -> String {
    let checked = check(&format!("{OPERATOR}{items}")).unwrap_or_else(|e| panic!("checks: {e:?}"));
    expand(checked, true).to_string().replace(' ', "")
}

#[test]
fn a_list_of_resources_or_a_wildcard_makes_a_generic_webhook() {
    let checked = check(&format!(
        "{OPERATOR} mutate add-label on [configmaps, secrets, \"*.example.com\"] (CREATE) => ops::add_label; \
         validate any on \"*.example.com\" (CREATE) => ops::any; \
         validate typed on [configmaps] (CREATE) => ops::typed; \
         validate one on configmaps (CREATE) => ops::one;"
    ))
    .unwrap_or_else(|e| panic!("checks: {e:?}"));
    let hooks = &checked.app.webhooks;
    let names: Vec<&str> = hooks[0]
        .resources
        .iter()
        .map(|r| r.name.v.as_str())
        .collect();
    assert_eq!(names, ["configmaps", "secrets", "*.example.com"]);
    let generic: Vec<bool> = hooks.iter().map(|h| h.generic).collect();
    assert_eq!(generic, [true, true, true, false]);
    assert_eq!(hooks[0].resources[2].wildcard_group(), Some("example.com"));
}

#[test]
fn generic_handlers_are_typed_by_dynamic_object() {
    let code = expanded(
        "mutate add-label on [configmaps, secrets] (CREATE) => [ops::add_label, ops::add_tier]; \
         validate one on configmaps (CREATE) => ops::one;",
    );
    let dynamic = "::piceli::__private::mutator::<::piceli::kube::core::DynamicObject,_>";
    assert_eq!(code.matches(dynamic).count(), 2, "{code}");
    assert!(
        code.contains("validator::<::piceli::k8s_openapi::api::core::v1::ConfigMap,_>"),
        "{code}"
    );
}

#[test]
fn each_custom_resource_name_is_compared_with_its_crd_name_at_compile_time() {
    let code = expanded(
        "custom_resource crate::ops::ConfigMapGenerator; \
         validate x on configmapgenerator.nullable.se (CREATE) => ops::x; \
         mutate y on [configmaps, configmapgenerators.nullable.se] (CREATE) => ops::y;",
    );
    for written in [
        "\"configmapgenerator.nullable.se\"",
        "\"configmapgenerators.nullable.se\"",
    ] {
        assert!(
            code.contains(&format!(
                "crd_name_mismatch(<crate::ops::ConfigMapGenerator>::__PICELI_CRD_NAME,{written}"
            )),
            "{written}: {code}"
        );
    }
    assert!(code.contains("PCL0178:validatexison"), "{code}");
    assert!(code.contains("PCL0178:mutateyison"), "{code}");
    // The typed webhook takes `Request<ConfigMapGenerator>`, the generic one `Request<DynamicObject>`.
    assert!(
        code.contains("validator::<crate::ops::ConfigMapGenerator,_>"),
        "{code}"
    );
    assert!(
        code.contains("mutator::<::piceli::kube::core::DynamicObject,_>"),
        "{code}"
    );
}

#[test]
fn an_empty_list_and_a_wildcard_without_a_group_are_errors_with_help() {
    let errors = errors(&format!(
        "{OPERATOR} mutate a on [] (CREATE) => ops::a; \
         mutate b on [configmaps, \"*.example\", configmaps] (CREATE) => ops::b;"
    ));
    let all = errors.join("\n---\n");
    for (i, expected) in [
        "mutate a lists no resource",
        "`*.example` does not name an API group",
        "`configmaps` is listed twice",
    ]
    .iter()
    .enumerate()
    {
        assert!(
            errors.get(i).is_some_and(|e| e.contains(expected)),
            "{i}: {expected}\n\n{all}"
        );
    }
    assert_eq!(errors.len(), 3, "{all}");
}

#[test]
fn an_operator_may_manage_its_own_certificate() {
    let checked = check("operator guard { image: IMAGE, tls: self_managed }")
        .unwrap_or_else(|e| panic!("checks: {e:?}"));
    let tls = checked.app.operator.map(|o| o.tls);
    assert_eq!(tls, Some(piceli_core::model::OperatorTls::SelfManaged));
    let wrong = errors("operator guard { image: IMAGE, tls: self_managd }");
    assert!(wrong[0].contains("cert_manager"), "{wrong:?}");
}

#[test]
fn an_operator_takes_env_for_its_serve_container() {
    let checked = check(
        r#"secret otel { token: from_env("OTEL_TOKEN") }
           operator guard { image: IMAGE, env: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_EXPORTER_OTLP_HEADERS: secret(otel.token) } }"#,
    )
    .unwrap_or_else(|e| panic!("checks: {e:?}"));
    let env = checked.app.operator.map(|o| o.env).unwrap_or_default();
    let names: Vec<&str> = env.iter().map(|e| e.name.v.as_str()).collect();
    assert_eq!(
        names,
        ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS"]
    );
    let wrong = errors(
        r#"operator guard { image: IMAGE, env: { POD_NAME: "x", A: "1", A: "2", B: secret(nope.key), "1X": "y" } }"#,
    );
    let all = wrong.join("\n");
    assert!(
        all.contains("`POD_NAME` is set by the operator's render"),
        "{all}"
    );
    assert!(all.contains("`A` is given twice"), "{all}");
    assert!(all.contains("nope"), "{all}");
    assert!(all.contains("1X"), "{all}");
}
