//! PCL0081: only a secret, config_map, service_account, pvc, service or gateway can be external (and `external` needs a kind).

piceli::app! {
    app demo;

    external secrte api-key;
    external deployment web;
    external api-key;
}

fn main() -> std::process::ExitCode {
    demo::main()
}
