//! PCL0017: a PersistentVolumeClaim asks for storage in a unit Kubernetes does not know (`5GB`).

piceli::app! {
    app demo;
    pvc uploads { storage: "5GB", access: ["ReadWriteOnce"] }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
