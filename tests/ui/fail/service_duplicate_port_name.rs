//! Two Service ports with the same name (`port:` names its port after the target, `http`, and `ports:` declares
//! `http` again). PCL0005's entry in the code table covers Service port names; today this reports PCL0003.

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 80, admin: 8081 },
    }

    service web -> web { port: 80 => http, ports: { http: 8081 => admin } }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
