//! `render --out DIR`: one file per object in apply order (`NN-kind-name.yaml`) and a
//! `kustomization.yaml` listing them; the same app writes the same bytes; files of an earlier render
//! that are no longer rendered go, other files stay. No cluster is contacted.

use piceli::runtime::render::{Options, render, to_yaml};
use piceli_cli::commands::render::dir;

mod shop {
    piceli::app! {
        app shop;
        target prod = local(namespace: "shop");
        crds "tests/crds/gateway.networking.k8s.io_httproutes.yaml";

        deployment api {
            image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
            ports: { http: 8080 },
        }
        service api -> api { port: 80 => http }
        config_map settings { data: { MODE: "live" } }
        resource HTTPRoute web {
            spec: { parentRefs: [{ name: "shared", namespace: "gateway-infra" }], rules: [{ backendRefs: [{ name: api, port: 80 }] }] },
        }
    }
}

fn read(dir: &std::path::Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn a_directory_holds_one_file_per_object_and_a_kustomization() {
    let objects = render(&shop::shop::app(), &Options::default())
        .expect("render")
        .objects;
    let out = tempfile::tempdir().expect("temp dir");
    let target = out.path().join("deploy");
    // A file of the user's, and one an earlier, longer render left.
    std::fs::create_dir_all(&target).expect("dir");
    std::fs::write(target.join("README.md"), "mine").expect("write");
    std::fs::write(target.join("09-secret-old.yaml"), "stale").expect("write");

    let files = dir::write(&objects, &target).expect("write the directory");
    assert_eq!(
        files,
        [
            "00-namespace-shop.yaml",
            "01-configmap-settings.yaml",
            "02-deployment-api.yaml",
            "03-httproute-web.yaml",
            "04-service-api.yaml",
        ]
    );
    // Each file is its object's document; together, the stream `render` prints.
    let joined: String = files.iter().map(|f| read(&target, f)).collect();
    assert_eq!(joined, to_yaml(&objects).expect("yaml"));
    assert!(read(&target, "03-httproute-web.yaml").contains("kind: HTTPRoute"));
    let kustomization = read(&target, dir::KUSTOMIZATION);
    let listed: Vec<&str> = kustomization
        .lines()
        .filter_map(|l| l.strip_prefix("- "))
        .collect();
    assert_eq!(listed, files);
    assert!(kustomization.contains("kind: Kustomization"));
    assert!(!target.join("09-secret-old.yaml").exists());
    assert_eq!(read(&target, "README.md"), "mine");

    // Deterministic: a second render writes the same bytes.
    let again = out.path().join("again");
    dir::write(&objects, &again).expect("write again");
    for f in files.iter().map(String::as_str).chain([dir::KUSTOMIZATION]) {
        assert_eq!(read(&target, f), read(&again, f), "{f}");
    }
}

#[test]
fn only_an_existing_directory_or_a_trailing_slash_is_a_directory() {
    let out = tempfile::tempdir().expect("temp dir");
    assert!(dir::is_dir(out.path()));
    assert!(dir::is_dir(std::path::Path::new("deploy/")));
    assert!(!dir::is_dir(&out.path().join("all.yaml")));
}
