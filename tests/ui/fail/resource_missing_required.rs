//! PCL0048: fields the CRD's schema requires (a Certificate's secretName and issuerRef).

piceli::app! {
    app shop;
    crds "crds/";

    resource cert-manager.io/v1/Certificate shop-tls {
        spec: { dnsNames: ["shop.example.com"] },
    }
}

fn main() -> std::process::ExitCode {
    shop::main()
}
