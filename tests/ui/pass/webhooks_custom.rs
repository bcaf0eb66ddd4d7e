//! Webhooks on the app's own custom resource (declared after them): a validating fn, a mutating
//! composite and the trait style, each typed by the `custom_resource` type.

mod policy {
    use piceli::webhook::{Mutation, Request, Validate, Verdict};

    #[derive(kube::CustomResource, serde::Serialize, serde::Deserialize, Clone, Debug, schemars::JsonSchema)]
    #[kube(group = "example.com", version = "v1", kind = "Lamp", namespaced)]
    pub struct LampSpec {
        pub color: String,
    }

    pub async fn known_color(req: Request<Lamp>) -> Verdict {
        match req.object().spec.color.as_str() {
            "red" | "green" => Verdict::allow(),
            other => Verdict::deny(format!("unknown color {other}")),
        }
    }
    pub fn lowercase(req: Request<Lamp>) -> Mutation {
        let mut lamp = req.object().clone();
        lamp.spec.color = lamp.spec.color.to_lowercase();
        Mutation::object(lamp)
    }
    pub async fn trimmed(req: Request<Lamp>) -> Mutation {
        let mut lamp = req.object().clone();
        lamp.spec.color = lamp.spec.color.trim().to_string();
        Mutation::object(lamp)
    }
    pub struct NotBlack;
    impl Validate for NotBlack {
        type Resource = Lamp;
        async fn validate(&self, req: Request<Lamp>) -> Verdict {
            if req.object().spec.color == "black" {
                Verdict::deny("a lamp is never black")
            } else {
                Verdict::allow()
            }
        }
    }
}

piceli::app! {
    app lamps;
    target local = local(namespace: "lamps-system");
    operator lamps { image: "ghcr.io/acme/lamps:1.0@sha256:9b2c4d6e8f0a1b3c5d7e9f1a2b4c6d8e0f2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c" }

    validate lamp-color on lamps.example.com (CREATE, UPDATE) => policy::known_color;
    mutate lamp-defaults on lamps.example.com (CREATE) => [policy::trimmed, policy::lowercase];
    validate lamp-not-black on lamps.example.com (CREATE) => policy::NotBlack;
    custom_resource crate::policy::Lamp;
}

fn main() -> std::process::ExitCode {
    let _ = lamps::webhooks();
    lamps::main()
}
