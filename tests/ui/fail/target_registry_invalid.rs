//! PCL0054: a target registry that is not `HOST[:PORT]/PATH`.

piceli::app! {
    app demo;

    target local = local(namespace: "shop") { registry: "https://ghcr.io/acme" };
    target prod = local(namespace: "shop") { registry: "shop" };
    deployment api { image: build(package: "shop-api") }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
