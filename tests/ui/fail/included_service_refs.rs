//! An Ingress to a Service of an included file: its ports are checked like a declared Service's
//! (PCL0023 lists them).

piceli::app! {
    app demo;
    include yaml("fixtures/web.yaml");

    ingress site {
        host: "shop.example.com",
        paths: { "/": web => htp, "/m": web => 9999 },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
