//! `include yaml(…) { namespace: keep }`: the object that names a namespace is rendered there, the one
//! that names none gets the target's.

use piceli::runtime::render::{Options, render};

piceli::app! {
    app shared;
    target local = local(namespace: "shop");

    include yaml("tests/fixtures/monitoring.yaml") { namespace: keep }
}

#[test]
fn a_kept_namespace_is_rendered_and_the_rest_go_to_the_target() {
    let objects = render(&shared::app(), &Options::default())
        .expect("renders")
        .objects;
    let namespace_of = |name: &str| {
        objects
            .iter()
            .find(|o| o["kind"] == "ConfigMap" && o["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no ConfigMap {name}"))["metadata"]["namespace"]
            .clone()
    };
    assert_eq!(namespace_of("scrape-config"), "monitoring");
    assert_eq!(namespace_of("shop-dashboards"), "shop");
}
