//! PCL0023: an Ingress path to an `external service` names no port (its ports are unknown); PCL0001: an
//! external Service's name is an RFC 1035 label.

piceli::app! {
    app demo;

    external service billing;
    external service "cats.v1";

    ingress edge { paths: { "/": billing, "/cats": "cats.v1" => 80 } }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
