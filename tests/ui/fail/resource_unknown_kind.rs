//! PCL0235: kinds no CRD read defines, with the closest one.

piceli::app! {
    app shop;
    crds "crds/";

    resource monitoring.coreos.com/v1/ServiceMonitors api {
        spec: { selector: {}, endpoints: [] },
    }
    resource Probe api {
        spec: {},
    }
}

fn main() -> std::process::ExitCode {
    shop::main()
}
