//! PodTemplate (v1): counts `metadata.generation` and defaults its template as a workload's
//! (`podTemplateStrategy` and `SetDefaults_PodSpec`).

use serde_json::{Map, Value};

use crate::registry::defaults::pod_template;
use crate::registry::rules::containers;
use crate::registry::strategy::Strategy;
use crate::status::Cause;

pub struct PodTemplate;

impl Strategy for PodTemplate {
    fn has_generation(&self) -> bool {
        true
    }

    fn default(&self, root: &mut Map<String, Value>, _: &mut dyn FnMut() -> String) {
        // The template sits at the top level of a PodTemplate, as `spec.template` does in a workload.
        pod_template(root);
    }

    fn validate(&self, object: &Value, out: &mut Vec<Cause>) {
        containers(&object["template"]["spec"], "template.spec", out);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn templates_need_container_images() {
        use crate::registry::strategy::Strategy;
        let mut causes = Vec::new();
        let t = json!({"template": {"spec": {"containers": [{"name": "a", "image": ""}]}}});
        super::PodTemplate.validate(&t, &mut causes);
        assert_eq!(causes[0].field, "template.spec.containers[0].image");
    }

    #[test]
    fn templates_get_pod_defaults_and_null_creation_time() {
        let mut t =
            json!({"template": {"spec": {"containers": [{"name": "a", "image": "nginx:1"}]}}});
        crate::registry::per_kind::apply_defaults("v1", "PodTemplate", &mut t, &mut String::new);
        assert_eq!(
            t["template"]["metadata"],
            json!({"creationTimestamp": null})
        );
        assert_eq!(t["template"]["spec"]["dnsPolicy"], "ClusterFirst");
        assert_eq!(
            t["template"]["spec"]["containers"][0]["terminationMessagePolicy"],
            "File"
        );
    }
}
