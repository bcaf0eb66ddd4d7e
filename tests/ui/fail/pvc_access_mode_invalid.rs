//! PCL0041: a PersistentVolumeClaim access mode that does not exist.

piceli::app! {
    app demo;
    pvc uploads { storage: "5Gi", access: ["ReadWriteAll"] }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
