//! PCL0034: an app without `app NAME;`.
//!
//! Without a name the macro emits no `demo` module, yet rustc reports no E0433 for `demo::main()` below
//! (checked: the snapshot holds only the macro's errors), so the case keeps the usual `main`.

piceli::app! {
    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
