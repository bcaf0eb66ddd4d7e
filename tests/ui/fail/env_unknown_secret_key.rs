//! PCL0011: an env var reading a key the Secret does not have.

piceli::app! {
    app demo;

    secret db {
        password: from_env("DB_PASSWORD"),
    }

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        env: { DB_PASSWORD: secret(db.pasword) },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
