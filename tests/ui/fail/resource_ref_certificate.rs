//! PCL0011, PCL0239, PCL0041: a Certificate makes its Secret known (a misspelt mount of it is still
//! unknown, with the Certificate's Secret as the closest); its issuerRef names an Issuer of the app, and
//! a kind cert-manager has.

piceli::app! {
    app shop;
    crds "crds/";

    deployment api {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        volumes: { tls: secret(shop-tsl) },
        mounts: { "/tls": tls },
    }
    resource Certificate shop-tls {
        spec: { secretName: shop-tls, dnsNames: ["shop.example.com"], issuerRef: { name: letsencrypt } },
    }
    resource Certificate admin-tls {
        spec: { secretName: admin-tls, dnsNames: ["admin.example.com"], issuerRef: { name: letsencrypt, kind: "ClusterIsuer" } },
    }
}

fn main() -> std::process::ExitCode {
    shop::main()
}
