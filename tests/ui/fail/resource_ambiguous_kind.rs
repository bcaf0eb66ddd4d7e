//! PCL0236: a kind alone that two CRDs define (a second Certificate in fixtures/): the candidates.

piceli::app! {
    app shop;
    crds "crds/";
    crds "fixtures/other-certificate-crd.yaml";

    resource Certificate shop-tls {
        spec: { secretName: "shop-tls", issuerRef: { name: "letsencrypt" } },
    }
}

fn main() -> std::process::ExitCode {
    shop::main()
}
