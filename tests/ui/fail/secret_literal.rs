//! PCL0028: a secret value written in the source — and only that: the deployment reading the key gets
//! no follow-on "no key" error.

piceli::app! {
    app demo;

    secret api {
        token: "hunter2",
    }

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        env: { TOKEN: secret(api.token) },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
