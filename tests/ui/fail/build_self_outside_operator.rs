//! PCL0052: `build(self)` outside the operator.

piceli::app! {
    app demo;

    deployment api { image: build(self) }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
