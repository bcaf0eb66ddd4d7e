//! PCL0012: a pvc volume of an undeclared PersistentVolumeClaim.

piceli::app! {
    app demo;

    pvc uploads { storage: "5Gi" }

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        volumes: { data: pvc(upload) },
        mounts: { "/data": data },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
