//! Shortcuts: a field set both by a shortcut and its block (PCL0049), values outside their sets (PCL0041),
//! an env_from of an undeclared ConfigMap (PCL0011), strategy on a job (PCL0025).

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        grace: 30,
        pod: { terminationGracePeriodSeconds: 10 },
        strategy: recreat,
        spread: [zone],
        security: baseline,
        env_from: [config(settigns)],
    }
    config_map settings { MODE: "prod" }
    job once { image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d", strategy: rolling }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
