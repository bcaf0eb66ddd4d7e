//! The table of fixed error codes: one entry per code, shared by the macro, the runtime and `explain`.
//!
//! Codes never change meaning once published; new problems get new codes.

use crate::coded::ExitClass;

/// An entry of the error-code table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeInfo {
    /// The code (`PCL0001`).
    pub code: &'static str,
    /// How a command that stops on this error ends the process (its exit code).
    pub exit_class: ExitClass,
    /// A short title.
    pub title: &'static str,
    /// What it means and how to fix it (what `explain` prints).
    pub explanation: &'static str,
}

macro_rules! codes {
    ($($variant:ident = $code:literal, $class:ident, $title:literal, $explanation:literal;)*) => {
        /// A fixed error code.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code { $(#[doc = $title] $variant,)* }

        /// Every code, in order.
        pub const ALL: &[CodeInfo] = &[$(CodeInfo { code: $code, exit_class: ExitClass::$class, title: $title, explanation: $explanation },)*];

        impl Code {
            /// The code's entry in the table.
            pub fn info(self) -> CodeInfo {
                match self { $(Code::$variant => CodeInfo { code: $code, exit_class: ExitClass::$class, title: $title, explanation: $explanation },)* }
            }
        }
    };
}

impl Code {
    /// The code text (`PCL0001`).
    pub fn as_str(self) -> &'static str {
        self.info().code
    }

    /// How a command that stops on this error ends the process: one class per code, so one exit code.
    pub fn exit_class(self) -> ExitClass {
        self.info().exit_class
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The entry for a code written as text (`PCL0001`, case-insensitive; `1` works too).
pub fn lookup(code: &str) -> Option<CodeInfo> {
    let code = code.trim();
    let digits = code
        .strip_prefix("PCL")
        .or_else(|| code.strip_prefix("pcl"))
        .unwrap_or(code);
    let n: u32 = digits.parse().ok()?;
    ALL.iter()
        .find(|info| info.code[3..].parse::<u32>().ok() == Some(n))
        .copied()
}

/// A class's exit code and what it means, for `docs/errors.md`.
fn exit_words(class: ExitClass) -> String {
    let what = match class {
        ExitClass::Failed => "the command ran and failed",
        ExitClass::Rejected => "refused: bad input, a refusal or a precondition",
        ExitClass::ApprovalRequired => "an approval is required",
    };
    format!("{} ({what})", class.exit_code())
}

/// The error-code table as Markdown (`docs/errors.md` is this text; a test keeps them equal).
pub fn markdown() -> String {
    let mut out = String::from(
        "# Error codes\n\n\
         Every failure Piceli reports carries a fixed code. Codes never change meaning. `explain CODE` on any \
         app binary (or `piceli explain CODE`) prints the entry below. `PCL00xx` codes are found by the \
         `app!` macro at compile time and, for values written as Rust expressions, by the runtime before any \
         cluster call; `PCL01xx` codes are run-time failures of the commands; `PCL021x` codes are the local cluster's (`piceli sim`).\n\n\
         This file is generated from `core/src/codes.rs`: run `PICELI_UPDATE_DOCS=1 cargo test -p piceli-core` \
         after changing the table.\n\n| code | title |\n|---|---|\n",
    );
    for i in ALL {
        out.push_str(&format!(
            "| [{}](#{}) | {} |\n",
            i.code,
            i.code.to_lowercase(),
            i.title
        ));
    }
    for i in ALL {
        out.push_str(&format!(
            "\n## {}\n\n**{}.** {}\n\nExit code: {}.\n",
            i.code,
            i.title,
            i.explanation,
            exit_words(i.exit_class)
        ));
    }
    out
}

codes! {
    InvalidName = "PCL0001", Rejected, "invalid object name",
        "Kubernetes object names must be DNS-1123 labels or subdomains: lowercase letters, digits and '-', \
         starting and ending with a letter or digit, at most 63 characters (253 for subdomains). Service names \
         must also start with a letter. Write the name in lowercase with '-' between words, e.g. `web-api`.";
    NameTooLongWithSuffix = "PCL0002", Rejected, "name too long once Kubernetes adds its suffix",
        "Kubernetes derives names from some objects: a CronJob's Jobs add 11 characters, a StatefulSet's pods add \
         `-<ordinal>` and controller-revision hashes, a Deployment's pods add two hashes. The derived name must \
         still be a valid DNS-1123 label. Shorten the name.";
    DuplicateObject = "PCL0003", Rejected, "two objects of the same kind have the same name",
        "Each object of a kind needs a unique name within the app. Rename one of them.";
    DuplicateContainer = "PCL0004", Rejected, "two containers in a pod have the same name",
        "Container names (including init containers) must be unique within a pod. Rename one.";
    DuplicatePort = "PCL0005", Rejected, "a port name or number is declared twice",
        "Within a pod, each container port name and each port number/protocol pair must be unique; within a \
         Service, each port name and number. Remove or rename the duplicate.";
    DuplicateEnv = "PCL0006", Rejected, "an environment variable is set twice",
        "A container's environment variable names must be unique: the later one would silently win. Remove one.";
    PortOutOfRange = "PCL0007", Rejected, "port number out of range",
        "Ports are 1 to 65535; node ports are 30000 to 32767; local forward ports are 1 to 65535 (use 1024 and up \
         to avoid needing privileges).";
    UnknownWorkload = "PCL0008", Rejected, "reference to a workload that is not declared",
        "Services, NetworkPolicies, autoscalers, disruption budgets, checks and target overrides refer to \
         workloads by name. Declare the workload, or fix the name (the message suggests the closest).";
    UnknownTargetPort = "PCL0009", Rejected, "a Service port maps to a port the workload does not expose",
        "`port: 80 => http` forwards Service port 80 to the container port named `http` of the selected \
         workload. Name a port that one of the workload's containers declares under `ports:`.";
    ProbePortNotExposed = "PCL0010", Rejected, "a probe uses a port the container does not expose",
        "http and tcp probes must target a port the same container declares (by name or number), or the probe \
         can never succeed. Add the port to `ports:` or probe a declared one.";
    UnknownConfigRef = "PCL0011", Rejected, "reference to a ConfigMap, Secret or key that is not declared",
        "`config(NAME.KEY)` and `secret(NAME.KEY)` in env, and config/secret volumes, must name a declared \
         ConfigMap or Secret and, for env, one of its keys.";
    UnknownVolume = "PCL0012", Rejected, "reference to a volume or claim that is not declared",
        "Mounts refer to a volume of the pod (`volumes:`) or a StatefulSet `volume_claims:` template; `pvc(NAME)` \
         volumes refer to a declared `pvc`. Declare it or fix the name.";
    MountPathNotAbsolute = "PCL0013", Rejected, "mount path is not absolute",
        "Mount paths must start with '/', contain no ':' and no '..' component.";
    DuplicateMountPath = "PCL0014", Rejected, "two mounts at the same path",
        "Each mount path in a container must be unique. Remove one or mount at another path.";
    InvalidImage = "PCL0015", Rejected, "invalid image reference",
        "An image reference is `[registry[:port]/]repository[:tag][@algorithm:digest]` with a lowercase \
         repository, e.g. `docker.io/library/nginx:1.27@sha256:…`.";
    ImageNotPinned = "PCL0016", Rejected, "image not pinned by digest",
        "Tags move; digests do not. Pin the image with `@sha256:<digest>` (find it with `crane digest IMAGE` or \
         `docker buildx imagetools inspect IMAGE`), or opt out explicitly with `image: unpinned(\"nginx:1.27\")`.";
    InvalidQuantity = "PCL0017", Rejected, "invalid resource quantity",
        "Quantities are numbers with an optional suffix: binary Ki Mi Gi Ti Pi Ei, decimal m k M G T P E, or an \
         exponent. `500m` (CPU) and `1Gi` are fine; `1GB` and `1gi` are not.";
    MilliMemory = "PCL0018", Rejected, "memory or storage in milli-units",
        "`512m` means 0.512 bytes, never what was meant. Write `512Mi` (mebibytes) or `512M` (megabytes).";
    RequestAboveLimit = "PCL0019", Rejected, "a request is larger than its limit",
        "Kubernetes rejects a container whose request for a resource exceeds its limit. Raise the limit or lower \
         the request.";
    BadBounds = "PCL0020", Rejected, "replicas, autoscaler or disruption-budget bounds make no sense",
        "Replicas are 0 or more; an autoscaler needs 1 ≤ min ≤ max; a disruption budget sets exactly one of \
         min_available and max_unavailable, a percentage at most 100%, and min_available not above the replicas.";
    InvalidLabel = "PCL0021", Rejected, "invalid label or annotation",
        "Label keys are an optional DNS subdomain prefix and '/', then a name of at most 63 characters of \
         letters, digits, '-', '_' and '.', starting and ending alphanumeric; label values follow the same rule \
         (and may be empty). Piceli sets `app.kubernetes.io/name` and `/managed-by` on every object (and \
         `/component` on the pods of a workload whose selector is its own) itself; `app.kubernetes.io/instance`, \
         `/part-of`, `/version` and `helm.sh/chart` are yours to write.";
    UnknownService = "PCL0022", Rejected, "reference to a Service that is not declared",
        "Ingress paths, checks and StatefulSet `service:` refer to declared Services. Declare it or fix the name.";
    UnknownServicePort = "PCL0023", Rejected, "reference to a Service port that does not exist",
        "Ingress backends, access forwards and checks name a port of the Service by name or number. Use one the \
         Service declares.";
    UnknownOverride = "PCL0024", Rejected, "a target override names something that does not exist",
        "Target overrides are `WORKLOAD.FIELD: value` with FIELD one of replicas, image, env.NAME, requests.cpu, \
         requests.memory, limits.cpu, limits.memory. Fix the workload or field name.";
    UnknownKey = "PCL0025", Rejected, "unknown key or keyword",
        "The DSL does not know this key here. Check the spelling (the message suggests the closest) and the \
         DSL reference in docs/dsl.md.";
    MissingKey = "PCL0026", Rejected, "a required key is missing",
        "Some keys are required, e.g. a container's `image`. Add it.";
    WrongType = "PCL0027", Rejected, "a value has the wrong type",
        "The key expects another kind of value (a string, a number, a map, a list, a reference). The message \
         says which.";
    SecretLiteral = "PCL0028", Rejected, "a secret value is written in the source",
        "Secret values never live in source code. Use `from_env(\"VAR\")`, `from_file(\"path\")` or \
         `generate(random(32))` (see PCL0095 for every generator).";
    InvalidEnvName = "PCL0029", Rejected, "invalid environment variable name",
        "Environment variable names are letters, digits, '_', '-' and '.', not starting with a digit.";
    InvalidSchedule = "PCL0030", Rejected, "invalid CronJob schedule",
        "A schedule is five fields (minute hour day-of-month month day-of-week) or a macro like `@hourly`.";
    NotScalable = "PCL0031", Rejected, "an autoscaler targets a workload that cannot scale",
        "HorizontalPodAutoscalers scale Deployments and StatefulSets only.";
    DuplicateLocalPort = "PCL0032", Rejected, "two access forwards use the same local port",
        "Each `access: forward(local: PORT)` needs its own local port.";
    UnknownTarget = "PCL0033", Rejected, "unknown or duplicate target",
        "Targets are declared once each with `target NAME = kubeconfig(…)` or `target NAME = local(…)`; \
         `--target` must name one of them.";
    MissingAppName = "PCL0034", Rejected, "the app has no name, or two",
        "Start the app with exactly one `app NAME;`.";
    IncludeMalformed = "PCL0035", Rejected, "an included YAML or JSON file does not parse",
        "The file named in `include yaml(…)`/`include json(…)` must be valid YAML (documents separated by \
         `---`) or JSON. The message gives the line and column.";
    IncludeNotObject = "PCL0036", Rejected, "an included document is not a Kubernetes object",
        "Every document of an included file must be a mapping with `apiVersion`, `kind` and `metadata.name`.";
    IncludeUnreadable = "PCL0037", Rejected, "an included file cannot be read",
        "Paths in `include yaml(…)`, `include json(…)` and `file(…)` are relative to the app crate's directory \
         (where its Cargo.toml is). Check the path.";
    UnknownRole = "PCL0038", Rejected, "reference to a role or ServiceAccount that is not declared",
        "Bindings grant a declared role (`role`/`cluster_role`) to declared ServiceAccounts; workloads run as a \
         declared ServiceAccount. Declare it or fix the name.";
    InvalidPortName = "PCL0039", Rejected, "invalid port name",
        "Port names are 1 to 15 characters of lowercase letters, digits and '-', with at least one letter, not \
         starting or ending with '-' and without '--'.";
    InvalidPath = "PCL0040", Rejected, "invalid HTTP path",
        "HTTP paths in probes, checks, access health probes and Ingress rules start with '/'.";
    InvalidValue = "PCL0041", Rejected, "a value is not one of the allowed ones",
        "The key accepts a fixed set of values (e.g. restart policy `Never` or `OnFailure`, protocol `TCP`, \
         `UDP` or `SCTP`, a valid duration like `10s`). The message lists them.";
    InvalidConfigKey = "PCL0042", Rejected, "invalid ConfigMap or Secret key",
        "Keys are letters, digits, '-', '_' and '.', at most 253 characters, and not `.` or `..`.";
    DuplicateKey = "PCL0043", Rejected, "a key is given twice",
        "Within one map (`{ … }`) each key appears once; the second would silently replace the first. Remove \
         one.";
    Syntax = "PCL0044", Rejected, "the app! input does not parse",
        "The DSL is a list of items: `KEYWORD NAME [-> NAME] [= VALUE] { key: value, … }` or `KEYWORD CALL;`. \
         Values are strings, numbers, names, calls, `{ … }` maps, `[ … ]` lists, `a => b` mappings, or Rust \
         expressions in parentheses. See docs/dsl.md.";
    UnknownApiField = "PCL0045", Rejected, "unknown field in a schema-checked block",
        "`pod:`, `container:`, `spec:` and the other blocks take the Kubernetes API's own fields (camelCase, as in \
         the API reference and `kubectl explain`), checked against the 1.33 schema. The message names the type \
         and suggests the closest field.";
    ApiFieldType = "PCL0046", Rejected, "a block value has the wrong type for its API field",
        "The API field takes another kind of value (a string, an integer, `true`/`false`, a map, a list). Write \
         the value the message names, e.g. `runAsUser: 1000` rather than `runAsUser: \"root\"`.";
    ApiEnumValue = "PCL0047", Rejected, "a block value is not one of the API field's values",
        "Some API fields accept a fixed set of strings (e.g. `imagePullPolicy`: Always, Never, IfNotPresent; a \
         toleration's `operator`: Exists, Equal). The message lists them and suggests the closest.";
    ApiFieldMissing = "PCL0048", Rejected, "a block object lacks a required API field",
        "Nested API objects have required fields (e.g. a `topologySpreadConstraints` item \
         needs `maxSkew`, `topologyKey` and `whenUnsatisfiable`), and items of keyed lists need their key (the \
         `name` of a container, volume or env var, the `containerPort` of a port). Add it.";
    FieldSetByKey = "PCL0049", Rejected, "a block sets a field that a first-class key sets",
        "When the DSL has its own key for a field (`image:`, `ports:`, `replicas:`, …) or generates it (the \
         selector, the pod template), the block may not set it too: there would be two sources of truth. Use \
         the key the message names, or drop the key and keep the block.";
    ReservedDataKey = "PCL0050", Rejected, "a ConfigMap or Secret key is reserved for metadata",
        "In the short form `config_map NAME { KEY: VALUE }` every key is data, so `labels`, `annotations` and \
         `data` (and a Secret's `type`) are reserved and cannot be data keys. To give labels or annotations, or \
         to have a data key with one of those names, put the data under `data: { … }`.";
    FragmentCycle = "PCL0051", Rejected, "a fragment uses itself",
        "A `piceli::fragment!` may `use` other fragments, but a chain of `use` that leads back to the same \
         fragment would splice forever. Remove the `use` that closes the loop.";
    BuildArguments = "PCL0052", Rejected, "`build(…)` is written wrongly",
        "An image built from this workspace is `image: build(package: \"shop-api\")`, with optional `bin: \"…\"` \
         (the package's name by default) and `base: \"IMAGE@sha256:…\"`; the operator's own binary is \
         `image: build(self)`, allowed only in `operator NAME { … }`. Use those arguments only.";
    BuildBaseNotPinned = "PCL0053", Rejected, "a build's base image is not pinned by digest",
        "A base image decides what the built image holds, so it must be pinned: `base: \
         \"gcr.io/distroless/cc-debian12@sha256:<64 hex digits>\"`. Leave `base` out for an image of the binary and \
         the shared libraries it links.";
    InvalidRegistry = "PCL0054", Rejected, "a target's registry is not `HOST[:PORT]/PATH`",
        "`target NAME = … { registry: \"127.0.0.1:5000/shop\" }` names the repository built images are pushed \
         under: a host (with a `.`, a `:PORT`, or `localhost`), then a lowercase path; no scheme, no tag. \
         `--registry` overrides it for one run.";
    InvalidBuildName = "PCL0055", Rejected, "a build names a package or binary cargo cannot have",
        "`package:` and `bin:` are cargo names (letters, digits, `-`, `_`), as in the package's Cargo.toml.";
    BuildConflict = "PCL0056", Rejected, "one package and binary is built two ways",
        "Every `build(package: …, bin: …)` of the same package and binary makes one image, so they must agree \
         on `base:`. Give them the same base, or build another binary.";
    ServiceOnJob = "PCL0057", Rejected, "a Service selects a job or cron_job",
        "A `job` or `cron_job` runs pods to completion: a Service would route to pods that come and go, and a \
         Job's pods have no stable label a Service could select. Point the Service at a `deployment`, \
         `stateful_set` or `daemon_set`; for a job that must be reached while it runs, use a workload that \
         stays up.";
    IncludeRemovedVersion = "PCL0058", Rejected, "an included object's API version is not served by Kubernetes 1.33",
        "Kubernetes stopped serving this apiVersion for the kind (`apps/v1beta2` Deployments in 1.16, \
         `extensions/v1beta1` Ingresses in 1.22, `autoscaling/v2beta1` autoscalers and `policy/v1beta1` \
         budgets in 1.25, …), so the cluster would refuse the object at apply time. Rewrite it for the \
         version the help names — `piceli import yaml FILE` converts it and says what changed — or remove \
         it when the kind is gone (PodSecurityPolicy).";
    IncludeInvalidName = "PCL0059", Rejected, "an included object's name is not one its kind allows",
        "The API server checks `metadata.name` by kind: a Service's is an RFC 1035 label (lowercase letters, \
         digits and '-', starting with a letter, at most 63), a Namespace's a DNS-1123 label, RBAC objects' \
         anything without '/' or '%', and the other built-in kinds' a DNS-1123 subdomain (at most 253, \
         dot-separated lowercase labels). Rename the object in the file (and what refers to it).";
    IncludeOtherNamespace = "PCL0073", Rejected, "an included object names a namespace other than a target's",
        "`render` keeps an included object's own `metadata.namespace`, so an object of another namespace \
         would be deployed there, beside the app rather than with it. Remove its `metadata.namespace` to \
         deploy it to each target's namespace with the rest of the app, or, when it must live elsewhere (a \
         shared monitoring namespace), say so: `include yaml(\"k8s/monitoring.yaml\") { namespace: keep }`.";
    IncludeUnpinnedImage = "PCL0074", Rejected, "an included object runs an image that is not pinned by digest",
        "As for the app's own workloads, an image of an included Pod, workload, Job or CronJob must name its \
         digest (`nginx:1.27@sha256:…`), so that what was planned is what runs. Pin it in the file \
         (`piceli import yaml FILE --pin` looks digests up from the registry), or accept tags that can move \
         for that file: `include yaml(\"k8s/legacy.yaml\") { images: unpinned }`.";
    WebhookWithoutOperator = "PCL0060", Rejected, "a webhook is declared without an operator, or the operator twice",
        "`validate` and `mutate` items are served by the app's operator: declare exactly one `operator NAME { \
         image: \"…\", replicas: 2, tls: cert_manager(issuer: self_signed) }` in the same app.";
    UnknownResource = "PCL0061", Rejected, "a webhook names a resource the 1.33 API does not have",
        "A webhook is registered for a resource written as its plural name and API group: `pods`, `configmaps` \
         (core group), `deployments.apps`, `jobs.batch`, `ingresses.networking.k8s.io`. The message suggests the \
         closest. The handler's `Request<T>` must use that resource's k8s-openapi type. A generic webhook lists \
         resources (`on [configmaps, secrets]`, each once) and may name every resource of an API group with \
         a wildcard, `\"*.example.com\"` (the group's full name, no other `*`).";
    InvalidOperation = "PCL0062", Rejected, "a webhook lists an operation that does not exist",
        "Operations are `CREATE`, `UPDATE`, `DELETE`, `CONNECT` or `*`, in upper case, each once: \
         `validate no-latest-tag on deployments.apps (CREATE, UPDATE) => policy::no_latest_tag;`.";
    InvalidWebhookName = "PCL0063", Rejected, "a webhook name is not a DNS label",
        "A webhook's name is the last segment of its path (`/validate/NAME`) and the first label of its \
         qualified name `NAME.OPERATOR.piceli.dev`, which must be a DNS subdomain: lowercase letters, digits and \
         '-', at most 63 characters, the qualified name at most 253.";
    DuplicateWebhook = "PCL0064", Rejected, "two webhooks are served at the same path",
        "Each `validate NAME` and each `mutate NAME` is served at `/validate/NAME` or `/mutate/NAME`; two \
         webhooks of the same kind cannot share a name. Rename one.";
    WebhookHandler = "PCL0065", Rejected, "a webhook handler has the wrong shape or resource type",
        "A validating handler is `async fn(Request<T>) -> Verdict`, `fn(Request<T>) -> Verdict` (either may \
         return `Result<Verdict, E>`) or a type implementing `piceli::webhook::Validate` with `type Resource = \
         T`; a mutating one returns `Mutation` or implements `Mutate`. `T` is the k8s-openapi type of the \
         resource the webhook is declared on (`deployments.apps` → `Deployment`), or `kube::core::DynamicObject` \
         for a generic webhook (on a list of resources, `on [configmaps, secrets]`, or a wildcard, \
         `on \"*.example.com\"`). A validating webhook has one handler; only `mutate` takes a list (a \
         composite).";
    WebhookOption = "PCL0066", Rejected, "a webhook option is out of range",
        "`timeout` is 1 to 30 seconds (the API server's limit); `failure` is `fail` (the request is refused \
         when the webhook cannot answer) or `ignore`.";
    UnknownControllerResource = "PCL0067", Rejected, "a controller names a resource neither the 1.33 API nor the app's custom resources have",
        "A controller watches a resource written as its plural name and API group: `configmaps` (core group), \
         `deployments.apps`, or a custom resource the app declares with `custom_resource path::Type;` \
         (`lamps.example.com` for a `#[kube(group = \"example.com\", kind = \"Lamp\")]` type). The message \
         suggests the closest name.";
    InvalidControllerName = "PCL0068", Rejected, "a controller name is not a DNS label, or two controllers share it",
        "A controller's name qualifies its finalizer (`<app>.piceli.dev/<name>`), its metrics and its Events: \
         lowercase letters, digits and '-', at most 63 characters, unique in the app. Two controllers may watch \
         the same resource; they need distinct names.";
    ControllerHandler = "PCL0069", Rejected, "a controller handler has the wrong shape or object type",
        "A level-based handler is `async fn(Arc<K>, Context) -> Result<Action, E>`; with `(finalizer)` it is \
         `async fn(Event<K>, Context) -> Result<Action, E>` (`Event::Apply(obj) | Event::Cleanup(obj)`); an \
         edge-style handler is a unit struct implementing `piceli::controller::Controller<K>`. `K` is the \
         type of the resource the controller is declared on (`configmaps` → `ConfigMap`, a custom resource → \
         its `custom_resource` type) and `E` any `Display` error.";
    ControllerOption = "PCL0070", Rejected, "a controller option is not valid",
        "A controller's options are `(finalizer)` after the resource and a block `{ labels: { app: web }, \
         namespaces: all | [a, b], every: \"5m\", writes: [status, configmaps] }`. `every` is a whole number with \
         `ms`, `s`, `m` or `h`; namespaces are DNS labels; `writes` names resources as the controller does, or \
         `status` for the watched kind's status.";
    ControllerWithoutOperator = "PCL0071", Rejected, "a controller is declared without an operator",
        "Controllers run in the app's operator (`serve` in its Deployment), which the RBAC they need is bound \
         to: declare `operator NAME { image: \"…\" }` in the same app.";
    CustomResourceType = "PCL0072", Rejected, "a `custom_resource` is not a custom resource type, or is declared twice",
        "`custom_resource path::Type;` names the type `#[piceli::custom_resource(…)]` (or kube's \
         `#[derive(CustomResource, JsonSchema)]`) generates: the kind, e.g. `Lamp` for a `LampSpec` with \
         `kind = \"Lamp\"`, not the spec struct, once. `#[piceli::custom_resource]` also reports its own \
         arguments under this code (`group`, `version` and `kind` are required). Its CRD is rendered with the \
         OpenAPI schema of the type and applied before objects of it.";
    ControllerTriggerFn = "PCL0075", Rejected, "a controller's `reconcile_all_on` function does not give a stream of `()`",
        "`reconcile_all_on: path::to::function` names a function of the app that takes nothing and gives a \
         stream: `fn config_changes() -> impl futures::Stream<Item = ()> + Send + 'static` (or an `async fn` \
         giving it; `piceli::controller::Stream` is futures' trait). `serve` calls it \
         for each watch of the controller (each namespace it watches, each term as leader) and reconciles \
         every object of the controller for each item (kube's `Controller::reconcile_all_on`). A function of \
         another shape fails the build at its path.";
    ControllerBackoffFn = "PCL0076", Rejected, "a controller's `backoff` function has the wrong shape",
        "`backoff: path::to::function` names a function of the app giving the delay before an object that \
         failed is reconciled again: `fn my_backoff(error: &piceli::controller::HandlerError, attempt: u32) -> \
         std::time::Duration` (or `fn(attempt: u32) -> Duration`), where `attempt` counts that object's \
         failures in a row (1 = the first; a \
         success resets it) and `error` is the handler's error as text. The other form is exponential, \
         `backoff: { base: \"200ms\", max: \"5m\" }`. A function of another shape fails the build at its path.";
    ExternalConflict = "PCL0080", Rejected, "an `external` object is also declared by the app, or declared twice",
        "`external secret NAME;` (also `config_map`, `service_account`, `pvc`, `service`, `gateway`) says someone else makes the \
         object, so the app never renders, changes or prunes it. The app cannot also declare it (`secret NAME \
         { … }`), and one `external` line per object is enough. Keep one of the two.";
    ExternalKindUnknown = "PCL0081", Rejected, "`external` names a kind that cannot be external",
        "The app may refer to a Secret, ConfigMap, ServiceAccount, PersistentVolumeClaim, Service or Gateway \
         API Gateway it does not own: `external secret NAME;`, `external config_map NAME;`, `external \
         service_account NAME;`, `external pvc NAME;`, `external service NAME;`, `external gateway NAME;`. \
         Anything else is declared by the app, or included \
         (`include yaml(\"…\")`).";
    ExternalWithBody = "PCL0082", Rejected, "an `external` declaration has more than a kind and a name",
        "Someone else makes an `external` object, so the app says nothing about its contents, labels or \
         selectors: the line is only `external KIND NAME;`. To make the object from the app, declare it \
         (`secret NAME { … }`) instead.";
    NetworkPolicyForm = "PCL0083", Rejected, "a `network_policy` mixes its two forms, or has neither",
        "A NetworkPolicy is written either for a workload of the app (`network_policy NAME -> WORKLOAD { from: \
         [api, namespace(\"monitoring\")], ports: [http] }`, selecting pods by Piceli's labels) or with plain \
         label selectors (`network_policy NAME { pods: { app: \"web\" }, ingress: [{ from: [pods({ role: \
         \"frontend\" })], ports: [80] }] }`, rendered as written). Keep the keys of one form: `-> WORKLOAD`, \
         `from:`, `ports:`, or `pods:` (`{}` for every pod), `types:`, `ingress:`, `egress:`.";
    NetworkPolicyCidr = "PCL0084", Rejected, "a network policy's `cidr(…)` is not a CIDR, or an `except` is not inside it",
        "`cidr(\"10.0.0.0/8\", except: [\"10.1.0.0/16\"])` takes an IPv4 or IPv6 address and a prefix length \
         (at most 32 or 128); each `except` is a smaller block of the same family inside it. Fix the block the \
         message quotes.";
    NetworkPolicyTypes = "PCL0085", Rejected, "a network policy's `types:` is not valid, or leaves out rules it has",
        "`types:` lists `\"Ingress\"` and/or `\"Egress\"`, each once. Kubernetes ignores the rules of a direction \
         the types leave out, so `egress:` needs `\"Egress\"` in `types:` (and `ingress:` needs `\"Ingress\"`); \
         leave `types:` out to let the API choose (Ingress, plus Egress when `egress:` is given).";
    NetworkPolicyPortRange = "PCL0086", Rejected, "a network policy's port range is not valid",
        "`port(8000, end: 8080)` opens 8000 to 8080: `end` needs a port number (not a name) and is not below it; \
         both are 1 to 65535.";
    NetworkPolicySelector = "PCL0087", Rejected, "a label in a network policy's selector is not valid",
        "Selector keys are an optional DNS subdomain prefix and '/', then a name of at most 63 characters of \
         letters, digits, '-', '_' and '.', starting and ending alphanumeric; values follow the same rule (and \
         may be empty). Selectors match the labels the pods and namespaces carry as written, Piceli's own \
         included.";
    ServiceOfNoWorkload = "PCL0088", Rejected, "a Service of no workload is not valid as written",
        "`service NAME { spec: { … } }` (no `-> WORKLOAD`) is a Service rendered as written: an ExternalName \
         Service (`type: \"ExternalName\"` with `externalName`, a lowercase DNS name, and no `clusterIP`), a \
         Service selecting pods by their own labels (`selector:`, valid label keys and values), or one without \
         a selector whose Endpoints someone else makes. Kubernetes requires the ports of every type but \
         ExternalName and headless (`clusterIP: \"None\"`), and ignores `externalName` on other types. Keys \
         that route to a workload's container ports (`port:`, `ports:`, `type:`, `node_ports:`, `access:`) \
         need `-> WORKLOAD` (PCL0026).";
    SecretGenerator = "PCL0095", Rejected, "a secret generator is unknown or its arguments are wrong",
        "A generated secret value is `generate(GENERATOR)` with GENERATOR one of `random(N)` (N characters \
         from `A-Z a-z 0-9`, N from 8 to 4096), `tls_self_signed(hosts: [\"db\", …], days: D)` (add `ca: true` \
         for a CA), `tls_signed_by(CA_SECRET, hosts: [\"db\", …], days: D)` or `template(\"…{key}…\")`; D is \
         from 1 to 3650 and `hosts` lists at least one DNS name or IP address. A TLS generator under key K \
         fills K.crt and K.key (and ca.crt when signed by a CA), which must not be keys of their own. The \
         older `generated(length: N)` is `generate(random(N))`.";
    SecretTemplateKey = "PCL0096", Rejected, "a secret template names a key its Secret does not have, or templates name each other in a cycle",
        "`generate(template(\"postgres://app:{password}@db/app\"))` puts the value of each `{key}` of the same \
         Secret into the text (`{{` and `}}` are literal braces). Each key named must be a data key of that \
         Secret (a TLS generator under K fills K.crt and K.key), and a template cannot name itself or another \
         template that names it back. Add the key, or fix its spelling.";
    SecretCaUnknown = "PCL0097", Rejected, "`tls_signed_by` names a secret that holds no CA of the app",
        "`generate(tls_signed_by(CA, …))` signs with the certificate and key of the app's Secret CA: it must \
         be declared by the app with a key `tls` generated by `tls_self_signed(hosts: […], days: D, ca: true)` \
         (or read `tls.crt` and `tls.key` from `from_env`/`from_file`), and must not be the Secret itself.";
    RenderFailed = "PCL0100", Failed, "rendering failed",
        "An object could not be built from the app model. The message names the object.";
    OutputFailed = "PCL0101", Failed, "writing output failed",
        "Writing to stdout or a file failed (a closed pipe, a full disk).";
    UnknownTargetFlag = "PCL0102", Rejected, "`--target` names no declared target",
        "Pass one of the targets the app declares (the message lists them); `help-json` lists them too.";
    KubeconfigUnreadable = "PCL0103", Rejected, "the kubeconfig cannot be read",
        "Piceli reads only the kubeconfig file the target names (or `--kubeconfig PATH`), never ~/.kube/config \
         or KUBECONFIG. For the `local` target it is `.piceli/local/kubeconfig`, written by \
         `piceli sim start --dir .piceli/local`. Check the path, or pass `--kubeconfig`.";
    ContextMissing = "PCL0104", Rejected, "the kubeconfig has no such context",
        "Piceli never falls back to the current context. Name a context the kubeconfig defines, in the target \
         (`context: \"NAME\"`) or with `--context NAME`.";
    ClusterError = "PCL0105", Failed, "the cluster refused or could not be reached",
        "The API server answered with an error or did not answer. The message has its words; check the \
         cluster, the credentials and the network, then run the command again.";
    UnknownPlan = "PCL0106", Rejected, "no stored plan has this hash",
        "`apply --approve HASH` executes exactly a plan that `plan` stored under that hash in this state \
         directory. Run `plan` again and approve the hash it prints.";
    PreconditionFailed = "PCL0107", Rejected, "the cluster changed since the plan",
        "An object the plan saw has changed (another writer, another apply) or appeared. Nothing was \
         written. Run `plan` again, review, and approve the new hash.";
    NotOwned = "PCL0108", Rejected, "an object with this name exists and is not the app's",
        "Piceli never changes objects it does not own. To take it over, plan with `--adopt KIND/NAME` (or \
         `--adopt-all`) and approve that plan; or rename the object in the app.";
    SecretSourceMissing = "PCL0109", Rejected, "a secret's source is missing",
        "A secret key reads `from_env(\"VAR\")` or `from_file(\"PATH\")` when planning and applying (a relative PATH \
         from the working directory of the process, not from the app crate). Set the variable or create \
         the file. The value itself is never printed.";
    ApplyFailed = "PCL0110", Failed, "a write to the cluster failed",
        "The API server rejected a write (validation, a conflict with another field manager, a missing \
         namespace). The journal records what was written; fix the cause and `resume`, or plan again.";
    Locked = "PCL0111", Rejected, "another apply is running against this target",
        "One apply at a time per state directory. Wait for it, or `stop` it; the lock is released when that \
         process exits.";
    JournalFailed = "PCL0112", Failed, "the journal cannot be written",
        "Plans and releases are recorded in `STATE_DIR/journal.db` (SQLite). Check that the state directory is \
         writable and the disk has space. A release left `running` by an interrupted apply blocks new ones \
         (PCL0144): `resume` finishes it, `resume --abandon` ends it.";
    UnknownKind = "PCL0113", Rejected, "the cluster does not serve this kind",
        "An object's apiVersion/kind is not in the cluster's discovery (a missing CRD, a removed API). Install \
         the CRD first or fix the apiVersion.";
    PlanStale = "PCL0114", Rejected, "the app changed since the plan",
        "The objects the app renders now differ from those in the approved plan (the binary, its inputs or a \
         secret's source changed). Run `plan` again and approve the new hash. When this stops a `resume` of an \
         interrupted release, that release can no longer be finished as approved: end it with \
         `resume --abandon` (journaled as `superseded`; nothing is written), then plan again.";
    NotReady = "PCL0115", Failed, "applied, but not ready",
        "Every write landed, but a workload did not become ready in time (`--timeout`), a rollout exceeded its \
         progress deadline, or a Job failed. `status` and `kubectl describe` show why (image pull, crash \
         loop, probes). The release stays `running` (it is not `succeeded` until ready): once the cause is \
         fixed in the cluster, `resume` (or `deploy --resume`) waits again and finishes it; to fix forward \
         with a new plan, end it with `resume --abandon` first, or `rollback`.";
    ForwardFailed = "PCL0116", Failed, "cannot forward to the app's pod",
        "A port forward (for a check, `access` or `status`) found no running, ready pod for the Service or \
         workload, the port is not declared, or the cluster refused the forward. `status` shows the \
         workload's health; check the port name in `app!` and that the pods are ready.";
    ImagesNotApproved = "PCL0117", Rejected, "the images to deliver are not the ones the approved plan runs",
        "`deploy` delivers only what the approved plan runs: each image's `registry/name@sha256:…` must be in \
         the plan, and the built content must hash to that digest. The state directory (the journal, the \
         build cache under `builds/`, `images.json`) was edited after the plan was made, or the cache lost \
         a blob. Run `deploy` again: it builds what is missing, plans, and asks for a new approval.";
    ModelFormat = "PCL0118", Failed, "the app's embedded model is of another piceli release",
        "`app!` embeds the checked app in the binary in a versioned form, and the runtime reads only its own \
         version. A mismatch means the app was compiled by a piceli-macros of one release and linked with a \
         piceli-runtime of another (two piceli versions in one lock file). The message gives the versions or \
         the exact read error. Depend on the one `piceli` crate, run `cargo update -p piceli`, and rebuild.";
    PortInUse = "PCL0120", Rejected, "a local port `access` needs is in use",
        "`access` listens on 127.0.0.1 at each declared forward's local port and refuses to start when one is \
         taken (nothing is started). Stop the other program holding the port (`ss -ltnp` shows it), serve \
         only the other forwards with `--only NAME`, or move this one with `--port NAME=LOCAL` (0 picks a \
         free port).";
    UnknownForward = "PCL0121", Rejected, "no declared forward has this name",
        "`--only NAME` and `--port NAME=LOCAL` name a Service that declares `access: forward(local: …)`. \
         The message lists the declared forwards; `help-json` and `render` show the app's Services.";
    BadPortOverride = "PCL0122", Rejected, "`--port` is not NAME=LOCAL",
        "Write `--port NAME=LOCAL` with a declared forward's Service name and a local port from 0 to 65535 \
         (0 picks a free port, printed when `access` is ready), e.g. `--port web=18081`.";
    NoForwards = "PCL0123", Rejected, "the app declares no forward",
        "`access` serves the forwards Services declare with `access: forward(local: PORT, health: \"/\")`. \
         Add one to a Service in `app!`, or reach the app through the URLs `status` lists.";
    PlanNotApproved = "PCL0124", Rejected, "no recorded approval covers this plan",
        "The journal records what approved each plan piceli carries out (`apply --approve HASH`, \
         `deploy --approve HASH`, the automatic rollback; a deploy run's approval is bound to that run). A \
         release or a deploy run names a plan with no such record: the run was pointed at another stored \
         plan after approval, or it was left unfinished by a piceli whose journal had no approvals (schema \
         3). Nothing was written or pushed. Finish or end a running release (`resume`, or \
         `resume --abandon`), then run `deploy` (or `plan`) again and approve the hash it prints; a new \
         `deploy --approve HASH` abandons the old run.";
    CheckFailed = "PCL0130", Failed, "a post-deploy check failed",
        "A declared check (`check http|exec|metric|code(…)` in `app!`) did not pass within its retries \
         (defaults: timeout 10s per attempt, 3 attempts, 2s apart). The message names the check and what it \
         saw. Results are journaled (`status` shows the last ones). When the target sets \
         `rollback_on_failed_checks: true`, `deploy` re-applies the previous succeeded release and says which.";
    DeployApprovalMismatch = "PCL0131", Rejected, "`deploy --approve` names a different plan",
        "`deploy` plans first and applies only when `--approve HASH` equals the hash of that plan. The app or \
         the cluster changed since you saw the hash. Run `deploy` without `--approve`, review, and approve the \
         hash it prints.";
    CodeCheckMissing = "PCL0132", Rejected, "a code check is not registered in this binary",
        "`check code(path)` runs an async Rust function compiled into the app binary. This binary was built \
         without it (a hand-made `piceli_cli::AppBinary` that leaves `code_checks` out). Call the `main()` \
         the `app!` macro generates, which registers every check.";
    RollbackFailed = "PCL0133", Failed, "the automatic rollback failed",
        "A check failed and `rollback_on_failed_checks` asked to re-apply the previous succeeded release, but \
         planning or applying that rollback failed. The message has both causes. Run `rollback`, review and \
         `apply --approve` it by hand, or fix forward.";
    PlanTampered = "PCL0140", Rejected, "the stored plan does not match its approved hash",
        "Every use of a stored plan (`apply`, `resume`, `deploy --resume`, a rollback) recomputes its hash \
         and compares it with the hash that was approved, and with the hash the cluster's apply Lease \
         records for a running release. They differ: the plan or the journal in the state directory was \
         edited after approval. Nothing was written. Run `plan` again, review, and approve the new hash; \
         if a release is still running, end it with `resume --abandon` first.";
    WrongTarget = "PCL0141", Rejected, "the plan was made for another target or namespace",
        "A plan is executed only for the target and namespace it was made for (both are covered by its \
         hash). Run the command with the same `--target` and `--namespace` as `plan`, or plan again for \
         this target and approve that hash.";
    ClusterLocked = "PCL0142", Rejected, "another apply holds the target's cluster lock",
        "One apply runs per app and namespace, across machines and state directories: the apply holds the \
         Lease `piceli-apply-<app>` in the target namespace, renews it while it runs and releases it at \
         the end (a killed holder's Lease expires after 15 s). The message names the holder. Wait for it \
         and plan again, or pass `--wait-lock` to wait up to `--timeout` seconds.";
    ApplyInterrupted = "PCL0143", Failed, "the cluster could not be reached during the apply",
        "A write failed for a reason that may pass (the connection dropped, the API server answered 5xx \
         or 429) and kept failing after retries with backoff. The release stays `running`: nothing is lost \
         and nothing is applied twice. When the cluster answers again, run `resume` (or \
         `deploy --resume`).";
    ReleaseRunning = "PCL0144", Rejected, "a release of this state directory is still running",
        "An interrupted release must be finished or abandoned before another plan is applied. Run \
         `resume` to finish it; when it can no longer be finished (its app or secret sources changed, \
         PCL0114), `resume --abandon` ends it as `superseded` in the journal (nothing is written to the \
         cluster), then plan again and approve the new hash.";
    BadHash = "PCL0145", Rejected, "not a plan hash",
        "`--approve` takes the hash `plan` (or `deploy`) printed: 64 hex digits, or a prefix of at least 12 \
         that names one stored plan (`history` shows 16). Copy it again from the plan's output.";
    AmbiguousHash = "PCL0146", Rejected, "the hash prefix names more than one plan",
        "Several plans stored in this state directory start with these digits. Give more of the hash (the \
         message lists the plans it matches).";
    FieldConflicts = "PCL0147", Rejected, "fields the app sets are owned by another field manager",
        "Someone changed fields of the app's objects with another tool (`kubectl scale`, `kubectl set image`, \
         a controller), so server-side apply would take them over. `plan` lists every such field with its \
         manager and stores nothing. Take them with `plan --take-ownership` (all) or `--take-ownership FIELD` \
         (each; the plan shows which fields it takes from whom, and applying it uses force for exactly those \
         objects), or change the app to the values the other manager set. A field the app does not set is \
         never taken.";
    JournalDamaged = "PCL0150", Rejected, "the journal is damaged",
        "`STATE_DIR/journal.db` exists but cannot be read as a journal: it is empty (0 bytes), is not an SQLite \
         database, lacks a table, or holds a value this piceli never writes. It is never re-initialized, since \
         that would silently drop the releases, their history and the rollback points. Restore the state \
         directory from a backup; or move it aside (its history is lost with it) and run `plan` again. \
         `resume`, `status`, `stop` and every other command that reads the journal refuse until then.";
    InvalidNameFlag = "PCL0151", Rejected, "a name on the command line is not a valid Kubernetes name",
        "`--namespace` (and every other name given on the command line that becomes part of an API path) must \
         be a DNS-1123 label: at most 63 lowercase letters, digits and '-', starting and ending with a letter \
         or digit, e.g. `web-staging`. It is checked before any cluster call: nothing was written and the \
         state directory was not created.";
    UnknownRelease = "PCL0152", Rejected, "no release with this number",
        "`rollback N` and `diff N [M]` name releases of this state directory's journal, and a rollback needs a \
         succeeded release before the live one. `history` lists the releases and their states; pass one of \
         those numbers.";
    DryRunRejected = "PCL0153", Rejected, "the cluster rejected an object in a dry run",
        "`plan` sends every object as a server-side-apply dry run (nothing is written) and the API server \
         refused one: the object is invalid for this cluster. The message has the server's words. Fix the \
         object in `app!`, then run `plan` again. No plan was stored. (Fields another field manager owns are \
         listed all at once as PCL0147.) When the server says a field `is immutable` (a Job's pod template, \
         e.g. its image; a Deployment's selector; a StatefulSet's volumeClaimTemplates or serviceName; a \
         Service's clusterIP), the object is valid but cannot be changed in place. For an object of the \
         app the plan itself proposes to replace it (the action `replace`, with the field and the reason; a \
         running Job is PCL0221, a PersistentVolumeClaim or a Namespace PCL0223), so this code with an \
         immutable field is left for an object the plan adopts (`--adopt`), which is never replaced: keep \
         its live value in `app!`, or delete it yourself when that is safe, then run `plan` again.";
    TlsFailed = "PCL0154", Failed, "the cluster's certificate was not accepted (TLS)",
        "The connection reached the API server, but its TLS certificate is not signed by the \
         certificate-authority the kubeconfig names (or names another host, or expired). The kubeconfig is \
         stale or points at another cluster: get a fresh kubeconfig (the local cluster writes one at \
         `.piceli/local/kubeconfig` when it starts), or pass the right one with `--kubeconfig`.";
    ClusterUnreachable = "PCL0155", Failed, "nothing answers at the cluster's address",
        "The connection to the API server's address was refused or could not be made: the cluster is not \
         running, or the kubeconfig's `server:` has a wrong host or port. Start the cluster (`piceli sim start \
         --dir .piceli/local` for the local one) or fix the kubeconfig, then run the command again.";
    Unauthorized = "PCL0156", Failed, "the cluster rejected the credentials",
        "The API server answered 401 Unauthorized: the kubeconfig's token or client certificate is wrong, \
         expired or revoked. Get fresh credentials for the context (the local cluster writes its kubeconfig \
         when it starts), then run the command again.";
    EnvFileInvalid = "PCL0157", Rejected, "an `--env-file` cannot be read",
        "`--env-file FILE` holds the variables `from_env(\"VAR\")` secret sources read before the process \
         environment: one `KEY=VALUE` per line, `#` comments, an optional `export `, values optionally in \
         single quotes (as written) or double quotes (with `\\n`, `\\t`, `\\\"` and `\\\\` escapes). The \
         message names the file and line; fix that line, or the path.";
    JournalNewer = "PCL0158", Rejected, "the journal was written by a newer Piceli",
        "`STATE_DIR/journal.db` has a schema version this binary does not know: a newer Piceli wrote it. Nothing \
         was read or changed. Run the app binary built with the Piceli version that wrote the state directory \
         (or a newer one).";
    UnknownStep = "PCL0159", Rejected, "no step with this index in the release",
        "A release's steps are numbered from 0 in the order its plan lists them (`history RELEASE` shows \
         them). Name a step the release has.";
    ControllersInvalid = "PCL0170", Rejected, "the controllers cannot run as registered",
        "Two controllers share a name, a name is not a DNS label, or a label selector does not parse. Give \
         every controller a distinct lowercase name (letters, digits, '-') and write selectors as kubectl \
         takes them (`app=web,tier!=cache`).";
    ControllerWatchFailed = "PCL0171", Failed, "a controller's watch failed",
        "The controller could not list or watch the kind it handles: the kind is not served (its CRD is not \
         applied yet), the operator's ServiceAccount may not list/watch it, or the API server went away. The \
         watch is retried with backoff; apply the CRD or grant the RBAC the rendered Role holds.";
    HandlerFailed = "PCL0172", Failed, "a controller's handler returned an error",
        "A reconcile or edge handler returned an error. The object is retried with its own exponential \
         backoff (with jitter, capped); other objects are not held up. Fix the cause the message names; the \
         next retry picks it up.";
    FinalizerFailed = "PCL0173", Failed, "a controller could not add or remove its finalizer",
        "Adding or removing the controller's finalizer failed: the operator may not patch the kind (RBAC \
         needs patch on it, and update on `<kind>/finalizers`), or another writer changed the finalizers at \
         the same time (retried). Until the finalizer is removed, a deleted object stays Terminating.";
    LeaderElectionFailed = "PCL0174", Failed, "the leader Lease cannot be read or written",
        "Leader election could not read or write its coordination.k8s.io/v1 Lease in the operator's \
         namespace. The operator keeps trying; a leader that cannot renew within its renew deadline stops \
         reconciling. Check that the namespace exists and the ServiceAccount may get, create and update \
         leases there.";
    CustomResourceMismatch = "PCL0175", Rejected, "a controller's resource is not the name its custom resource type defines",
        "A controller on a custom resource is resolved at compile time by the type's kind (`lamps` → `Lamp`); \
         the full name (`lamps.example.com`) must be the CRD name the type defines (`plural.group` from its \
         `#[kube(…)]` attributes). With a `#[piceli::custom_resource]` type the build fails at the name; with \
         kube's plain derive, `render` and `serve` refuse the app. Write the name the message gives, or fix the \
         type's group or plural.";
    ClusterConfigFailed = "PCL0176", Rejected, "`serve` found no cluster to run the controllers against",
        "`serve` runs the controllers with `--kubeconfig`/`--context` when given, else with the in-cluster \
         configuration of its pod (the ServiceAccount token under /var/run/secrets/kubernetes.io/serviceaccount \
         and KUBERNETES_SERVICE_HOST). Pass a kubeconfig outside a cluster, or run it in its Deployment.";
    TlsSecretFailed = "PCL0177", Rejected, "the TLS Secret of `serve --tls-from-secret` cannot be read",
        "`serve --tls-from-secret NS/NAME` reads the serving certificate from a `kubernetes.io/tls` Secret \
         (keys tls.crt and tls.key, PEM) and reloads it when the Secret changes. The Secret must exist and the \
         credentials must allow get and watch on it; cert-manager writes it once its Certificate is issued.";
    LogFilterInvalid = "PCL0224", Rejected, "`RUST_LOG` is not a valid log filter",
        "`serve` prints its logs (a line per reconcile outcome, webhook failures, leader election) through \
         `tracing`, filtered by the `RUST_LOG` environment variable when it is set (default `info`). Its value \
         is a comma-separated list of directives: a level (`debug`), a target and a level \
         (`piceli_runtime=debug,kube=warn`), or a span and its fields (`[reconcile{controller=lamp}]=debug`); \
         see tracing-subscriber's `EnvFilter`. The message names the directive that does not parse: fix it, \
         or unset `RUST_LOG`.";
    WebhookCustomResourceMismatch = "PCL0178", Rejected, "a webhook's resource is not the name its custom resource type defines",
        "A webhook on the app's own custom resource (`validate NAME on lamps.example.com (CREATE) => …`) is \
         typed at compile time by the `custom_resource` type whose kind the plural names (`lamps` → `Lamp`); \
         its configuration's rules take the group, versions, plural and scope from that type's CRD when the \
         app is rendered, so the full name must be the CRD name the type defines (`plural.group` from its \
         `#[kube(…)]` attributes). With a `#[piceli::custom_resource]` type the build fails at the name; with \
         kube's plain derive, `render` and `serve` refuse the app. Write the name the message gives, or fix the \
         type's group or plural.";
    ServeFailed = "PCL0160", Rejected, "`serve` cannot start the webhook server",
        "`serve` binds `--listen` (default 0.0.0.0:8443) and loads the serving certificate from `--tls-cert` and \
         `--tls-key` (default /etc/piceli/tls/tls.crt and tls.key, where the operator's Deployment mounts its \
         TLS Secret). The message says which part failed: free the port, or point the flags at readable PEM \
         files.";
    ExternalMissing = "PCL0165", Rejected, "an `external` object the app refers to is not in the cluster",
        "`plan` looks up every `external` object in the target's namespace: one that is missing is reported as a \
         warning and recorded in the plan (`requires`, with `found: false`). Applying still works, but what \
         needs it waits until someone makes it (cert-manager issuing the certificate, External Secrets \
         syncing, the platform team, another app): pods that mount or read a Secret or ConfigMap do not start, \
         pods that run as a ServiceAccount are not created, pods that mount a claim stay Pending, an Ingress \
         serves no certificate of its own from a missing TLS Secret, requests an Ingress routes to a \
         missing Service fail, and routes attached to a missing Gateway carry no traffic (a Gateway is also \
         missing while the cluster does not serve the Gateway API). The warning says which. Make it, or check its name and the target's namespace.";
    ExternalChanged = "PCL0166", Rejected, "an `external` object changed between plan and apply",
        "The plan recorded whether each `external` object existed (and its UID). At apply it is read again: one \
         that appeared, disappeared or was replaced since the plan makes the plan stale. Run `plan` again and \
         approve the new hash.";
    SimFailed = "PCL0210", Failed, "a `piceli sim` command failed",
        "`piceli sim serve`/`start` could not create its directory, certificates, kubeconfig or server process; \
         `stop` could not end it; or `route`/`compact` could not use the cluster. The message names the file, \
         step or the cluster's answer; fix it (permissions, free space, a running cluster) and run the command \
         again. `DIR/sim.log` holds what a background server printed.";
    SimPortInUse = "PCL0211", Rejected, "the local cluster's port is taken",
        "`--port` names a port another process listens on. Pick another port, or leave `--port` out to get a \
         free one (the kubeconfig always names the port in use).";
    SimStateDamaged = "PCL0212", Rejected, "the local cluster's state database is damaged",
        "`DIR/state.db` cannot be read as the local cluster's store (a damaged or foreign SQLite file). Move \
         the directory aside (its objects are lost with it) and start a fresh cluster.";
    SimAlreadyRunning = "PCL0213", Rejected, "a local cluster is already running for this directory",
        "`start` found a live server in `DIR/sim.pid`. Use it (its kubeconfig is `DIR/kubeconfig`), or stop \
         it first with `piceli sim stop --dir DIR`.";
    SimUsage = "PCL0215", Rejected, "a `piceli sim` argument is not valid",
        "`piceli sim route` takes `NAMESPACE/SERVICE[:PORT] ADDRESS` (or `--delete` instead of the address, or no \
         arguments to list the routes). The message says what is missing or malformed.";
    SimNotRunning = "PCL0214", Failed, "no local cluster is running for this directory",
        "`status` and `stop` found no live server for the directory (exit 1). Start one with \
         `piceli sim start --dir DIR`.";
    ImageBuildFailed = "PCL0190", Failed, "cargo could not build the binary of an image",
        "`build(package: …, bin: …)` runs `cargo build --release --locked -p PACKAGE --bin BIN` in the app's \
         workspace. The message carries cargo's error: fix the build, update Cargo.lock (`--locked` refuses a \
         stale one), or name a package and binary that exist (`cargo metadata` lists them).";
    ImageAssembleFailed = "PCL0191", Failed, "the image cannot be assembled",
        "The image is made of the built binary and, with no `base`, the shared libraries `ldd` lists for it. The \
         message names the file that cannot be read or the `ldd` failure. Build a static binary, install the \
         missing library on the build host, or give a `base: \"image@sha256:…\"` that carries it.";
    ImageReferenceInvalid = "PCL0192", Rejected, "an image reference, registry or digest is not well formed",
        "A registry is `HOST[:PORT]/PATH` (`127.0.0.1:5000/shop`, `ghcr.io/acme/shop`); a base image is pinned by \
         digest (`gcr.io/distroless/cc-debian12@sha256:` and 64 hex digits); a digest is `sha256:` and 64 \
         lowercase hex digits. Fix the text the message quotes.";
    RegistryFailed = "PCL0193", Failed, "the image registry cannot be reached or refused a request",
        "Delivery talks to the registry over the OCI distribution API (HTTPS, or plain HTTP for a loopback \
         registry). The message gives the request and the registry's answer: start the registry, fix \
         `--registry`, or check that the repository exists and accepts pushes.";
    RegistryAuthFailed = "PCL0194", Rejected, "the registry refused the credentials",
        "Credentials come only from the docker config file named with `--registry-auth FILE` (its `auths` \
         entry for the registry host), never from ~/.docker/config.json. Name the file, or fix its entry \
         (`auth` is base64 of `user:password`).";
    ImageDigestMismatch = "PCL0195", Failed, "content pulled from the registry does not match its digest",
        "A blob or manifest is fetched by digest and checked: one that hashes differently was corrupted or \
         replaced in the registry. Push the image again; if it repeats, the registry's storage is damaged.";
    OciLayoutFailed = "PCL0196", Failed, "the OCI layout directory cannot be written",
        "`--oci-dir DIR` writes an OCI image layout (oci-layout, index.json, blobs/sha256/…). The message names \
         the path and the failure: make the directory writable or choose another.";
    ImageNoDestination = "PCL0197", Rejected, "the app builds images and nothing says where they go",
        "Built images are delivered by digest to the target's registry (`target NAME = … { registry: \
         \"HOST[:PORT]/PATH\" }`), to `--registry HOST[:PORT]/PATH` for one run, or into an OCI layout with \
         `--oci-dir DIR`. Give one of them.";
    ImageSourcesUnreadable = "PCL0198", Failed, "a build's sources or the state directory's image record cannot be read",
        "A build's identity is the digest of Cargo.lock, every file of the package's directory and the \
         toolchain, and the last delivered image of each build is kept in the state directory's images.json. \
         The message names the path: fix its permissions, or delete a damaged images.json (the next `deploy` \
         builds again).";
    ImportUnreadable = "PCL0180", Rejected, "`import` cannot read an input",
        "`piceli import yaml PATH…` reads files, directories (recursively: every `.yaml`, `.yml` and `.json` \
         file) and `-` (standard input). A path does not exist or cannot be read. Check the path, or pipe the \
         manifests in: `helm template … | piceli import yaml -`.";
    ImportMalformed = "PCL0181", Rejected, "an input is not Kubernetes YAML or JSON",
        "A document of an input does not parse as YAML or JSON, or is not a Kubernetes object (a mapping with \
         `apiVersion`, `kind` and `metadata.name`; a `kind: List` is read item by item). The message names the \
         file, line and column. Fix the document, or leave the file out.";
    ImportInvalidName = "PCL0182", Rejected, "an imported object's name is not a valid Kubernetes name",
        "The object's `metadata.name` is not one its kind allows, as the API server checks it: a DNS-1123 \
         subdomain for most built-in kinds (lowercase letters, digits, '-' and '.', at most 253 characters), \
         an RFC 1035 label for Services, a DNS-1123 label for Namespaces, a path segment for RBAC objects (no \
         '/' or '%'). No cluster would accept it and `app!` refuses it, so it is left out of the generated \
         module; the `// piceli:` comment at the end of the module has its JSON. Rename it there and declare \
         it by hand.";
    ImportOtherNamespace = "PCL0183", Rejected, "an imported object is in another namespace",
        "The app deploys every namespaced object to its target's namespace, but this object names another \
         one. It is imported into the target's namespace (marked with a `// piceli:` comment). Keep it if that \
         is what you want; otherwise import that namespace's objects into an app of their own \
         (`--namespace NS`).";
    ImportDuplicate = "PCL0184", Rejected, "two imported objects have the same kind and name",
        "Two inputs hold an object of the same kind, namespace and name (often a single file and an \
         all-in-one file of the same set). The first one read is imported; the later ones are left out. \
         Compare them and keep the one you mean.";
    ImportFieldChanged = "PCL0185", Rejected, "an imported field cannot be carried over as written",
        "A field of an imported object has no place in `app!` as written: a label Piceli sets itself \
         (`app.kubernetes.io/name`, `app.kubernetes.io/component`, `app.kubernetes.io/managed-by`), pod \
         template metadata other than labels and annotations, a Secret's `immutable`, or a label or annotation \
         value that is a number or boolean (written as a string, with a `// piceli:` comment on the item: the \
         API server takes only strings there and refused the object as it was). The message says what was \
         dropped or changed; set it by hand if it matters.";
    ImportOutputFailed = "PCL0186", Failed, "`import` or `new` cannot write its output",
        "Writing the generated source, crate, `.env.example` or included objects failed (the directory is \
         not writable, or the disk is full), or `--crate DIR` / `piceli new NAME` points at a directory \
         that already has a Cargo.toml (nothing is overwritten). Choose another path.";
    ImportLiveFailed = "PCL0187", Failed, "`import live` cannot read the namespace",
        "`piceli import live` lists every kind the cluster serves in the namespace, with the kubeconfig and \
         context given on the command line (never `~/.kube/config`, never `KUBECONFIG`). The kubeconfig \
         could not be read, the context is missing, or the cluster refused a list. The message has the \
         cluster's words.";
    ImportPinAuthUnreadable = "PCL0188", Rejected, "`import --pin` cannot read the registry credentials file",
        "`--registry-auth FILE` names a docker config (`{\"auths\": {\"HOST\": {\"auth\": \"base64 of \
         user:password\"}}}`) that `--pin` reads its credentials from (never ~/.docker/config.json). The file \
         is missing or is not such a config: fix the path or the file.";
    ImportPinFailed = "PCL0189", Rejected, "`import --pin` could not resolve an image's digest",
        "`--pin` asks each image's registry which digest its tag names now (`HEAD /v2/NAME/manifests/TAG`, \
         `Docker-Content-Digest`). The registry was unreachable, refused, or has no such tag, so the image is \
         imported as `unpinned(\"…\")` with a `// piceli:` comment giving the reason. Pin it by hand \
         (`…@sha256:…`), or run `import --pin` again where the registry is reachable.";
    ImportConvertedVersion = "PCL0216", Rejected, "an imported object's API version is no longer served; it was converted",
        "Kubernetes stopped serving this object's apiVersion (`apps/v1beta2` Deployments in 1.16, \
         `extensions/v1beta1` Ingresses in 1.22, `autoscaling/v2beta1` autoscalers in 1.25, …), so no 1.33 \
         cluster accepts it as written. The importer rewrote it to the version that serves the kind now, \
         as the API server converts stored objects (an Ingress backend's `serviceName`/`servicePort` become \
         `service.name`/`service.port`, v2beta1 metric targets become `target:` blocks, a missing workload \
         selector becomes the template's labels), and kept the old version's defaults where the new one \
         changed them (a DaemonSet's or StatefulSet's `OnDelete` updates). The message says what changed; \
         review it.";
    ImportRemovedVersion = "PCL0217", Rejected, "an imported object's API version is no longer served and was left out",
        "Kubernetes stopped serving this object's apiVersion and its conversion changes meaning in ways the \
         importer does not guess (webhook configurations' defaults, CustomResourceDefinition schemas, \
         flow-control shares), or the kind is gone (PodSecurityPolicy). A 1.33 cluster refuses it, and so \
         does `app!` in an included file (PCL0058), so it is left out of the generated module; the \
         `// piceli:` comment at the end of the module has its JSON. Rewrite it for the version the message \
         names (upstream `kubectl convert` does it for most kinds) and add it back, or drop it.";
    ImportRefusedSelector = "PCL0218", Rejected, "an imported NetworkPolicy's selector labels are not valid and it was left out",
        "A NetworkPolicy's `podSelector`, or a rule peer's `podSelector`/`namespaceSelector`, has a label key \
         or value the API server refuses (a key or value that does not start and end with a letter or digit, \
         a space, a value of more than 63 characters, a number or boolean where a string belongs), or the \
         policy has no `podSelector` at all (`{}` selects every pod). No cluster \
         accepts the policy, and `app!` checks the same rules (PCL0087), so it is left out of the generated \
         module; the `// piceli:` comment at the end of the module has its JSON. Fix the labels (quote a \
         number: `version: \"2\"`) and add it back as `network_policy NAME { pods: { … }, … }`.";
    ApprovalKeyUnusable = "PCL0219", Failed, "the approval key cannot be read or created",
        "Every approval piceli records (`apply --approve`, `deploy --approve`, an automatic rollback) is \
         sealed with the approving user's key, kept outside the state directory so that editing the state \
         directory cannot forge one: the file `PICELI_APPROVAL_KEY_FILE` names, else \
         `$XDG_CONFIG_HOME/piceli/approval.key`, else `~/.config/piceli/approval.key` (64 hex digits, mode \
         0600, created on the first approval). It could not be read or created: HOME is unset, the directory \
         is not writable, or the file is not 64 hex digits. Fix the path or the file, or point \
         `PICELI_APPROVAL_KEY_FILE` at a private file this user can write.";
    ApprovalUnsealed = "PCL0220", Rejected, "an approval in the journal is not sealed by this user's approval key",
        "`resume`, `deploy --resume` and `apply` carry out a stored plan only under an approval whose seal \
         this user's approval key reproduces (see PCL0219 for where the key lives). The journal has an \
         approval for the plan, but its seal is missing or does not match: the journal was edited by hand \
         (someone who can write the state directory planted or changed the row), the approval was given by \
         another user or machine with another key, or it was written by a piceli before approvals were \
         sealed. Nothing was written or pushed. Look at the plan (`plan`, `diff`) and approve it again \
         yourself (`deploy --approve HASH` starts a new run; `apply --approve HASH`); a team that approves \
         in one place and resumes in another shares one key file through `PICELI_APPROVAL_KEY_FILE`.";
    JobRunning = "PCL0221", Rejected, "a Job whose pod template (or another immutable field) changes is still running",
        "A Job's pod template (its image, env, command, …), selector, completions, completionMode, \
         podFailurePolicy, backoffLimitPerIndex, managedBy and successPolicy cannot be changed in place: the \
         API server refuses the update. `plan` therefore replaces a `job` of the app whose such fields \
         change — apply deletes the live Job (its pods with it) and creates the new one, the action \
         `replace` — but only once the Job has finished (condition `Complete` or `Failed`). This one is \
         still running: replacing it would kill its pods mid-run (a migration half done), so nothing was \
         planned. Wait for it to finish (`kubectl wait --for=condition=complete job/NAME`) and run `plan` \
         again; or, when stopping it now is safe, delete it yourself (`kubectl delete job NAME \
         --cascade=foreground`) and plan again (the plan then creates it). A Job that is not the app's is \
         never deleted (PCL0108 first).";
    HelmReleaseNotFound = "PCL0222", Rejected, "`--forget-helm-release` names a release that claims nothing here",
        "`plan --forget-helm-release NAME` plans the removal of a Helm release's claim on the app (carried \
         out by `apply --approve HASH` with the rest of the plan, typically a takeover): the `meta.helm.sh/release-name` and `…/release-namespace` annotations (and an \
         `app.kubernetes.io/managed-by: Helm` label) on the app's objects, and the release's records, the \
         Secrets `sh.helm.release.v1.NAME.vN` labelled `owner: helm, name: NAME`. No object the app declares \
         carries that release's annotation and no such Secret is in the target namespace, so nothing was \
         planned: the name is mistyped, or the release lives in another namespace. `helm list -n NAMESPACE` \
         names the releases; a plan lists those that claim its objects in its `Helm release …` lines.";
    RotateUnknown = "PCL0230", Rejected, "`--rotate` names no generated secret value of the app",
        "`plan --rotate SECRET` plans new values for every generated key of the app's Secret SECRET, and \
         `plan --rotate SECRET.KEY` for that key alone (a TLS generator's key K, or K.crt/K.key; templates \
         naming a rotated key, and certificates signed by a rotated CA, are made again with it). Only \
         generated keys (`generate(…)`, `generated(…)`) can be rotated: a value `from_env` or `from_file` \
         changes when its source does. The message names the Secrets and keys there are.";
    ImmutableData = "PCL0223", Rejected, "an immutable field changes on an object that holds data (a PersistentVolumeClaim, a Namespace, …)",
        "Kubernetes refuses to change some fields in place (a PersistentVolumeClaim's spec other than a larger \
         storage request and its volumeAttributesClassName; a CustomResourceDefinition's group, plural, scope \
         and kind; …). For most kinds `plan` then proposes to replace the object — delete it, then create it \
         again, the action `replace`, approved with the rest of the plan — but never for the kinds that hold \
         data or everything in them: PersistentVolumeClaims and PersistentVolumes (deleting the claim can \
         delete the volume and its data), Namespaces (everything in them) and CustomResourceDefinitions (every \
         custom resource of them). Nothing was planned. Keep the live value in `app!` (`kubectl get -o yaml` \
         shows it), or give the item a new name so a new object is created beside the old one and move the \
         data yourself; when the data may go, delete the old object yourself and plan again.";
    CrdVersionStranded = "PCL0231", Rejected, "a CustomResourceDefinition change would strand stored objects",
        "A CustomResourceDefinition keeps every version its objects may still be stored in: each version \
         `status.storedVersions` lists must stay in `spec.versions` (it may be `served: false`), and exactly one \
         version is the storage version. To retire a version: add the new version as the storage version \
         (with a conversion strategy when the schemas differ) and keep the old one; migrate the stored objects \
         (read and write each one, e.g. `kubectl get KIND -A -o json | kubectl replace -f -`, or the \
         kube-storage-version-migrator); remove the old version from `status.storedVersions` through the \
         status subresource; then drop it from the CRD. A change of scope is refused as PCL0223.";
    OtlpExportUnavailable = "PCL0232", Failed, "the OTLP exporter cannot be set up: spans are not exported",
        "An app built with the `otlp` feature of the `piceli` crate exports its spans (reconciles, admission \
         reviews, apply steps) over OTLP/HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` or \
         `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set. The exporter could not be made from the environment: an \
         endpoint that is not a URL, a CA file (`OTEL_EXPORTER_OTLP_CERTIFICATE`) that cannot be read or holds \
         no PEM certificate, a header list that does not parse. The app runs on and prints its logs; fix the \
         variable the warning names, or unset the endpoint to turn export off.";
    ApiValueLimit = "PCL0233", Rejected, "a value breaks a limit its schema sets (pattern, format, bounds, length)",
        "A CustomResourceDefinition's schema can limit a field beyond its type: `pattern` (a regular expression \
         the string must match), `format` (`int32`, `int64`, `date-time`), `minimum`/`maximum` and \
         `minLength`/`maxLength`. The API server refuses an object that breaks one, so `app!` checks them \
         where the value is written (and at run time for values from Rust expressions). The message names \
         the field and the limit; write a value within it. Rules in `x-kubernetes-validations` (CEL) are \
         not checked before the server sees them.";
    CrdFile = "PCL0234", Rejected, "a `crds` path cannot be read or holds no CustomResourceDefinition",
        "`crds \"DIR\";` (or a file) reads CustomResourceDefinition YAML files relative to the crate \
         (`CARGO_MANIFEST_DIR`) when the macro runs: every `.yaml`/`.yml` file of a directory, or the one \
         file. The path does not exist, a file does not parse as YAML, a document is not an \
         `apiextensions.k8s.io/v1` CustomResourceDefinition, or one lacks its group, names, scope or a \
         version's `schema.openAPIV3Schema`. Vendor the CRDs exactly as their project ships them (e.g. \
         the Gateway API's `config/crd/standard/*.yaml`).";
    UnknownCustomKind = "PCL0235", Rejected, "a `resource` names a kind no CRD of the app defines",
        "`resource GROUP/VERSION/KIND NAME { … }` (or `resource KIND NAME` when one CRD defines that kind) \
         names a custom resource kind defined by a CustomResourceDefinition the app reads with `crds \"…\";`. \
         No CRD read defines that group, kind, or served version; the help names the closest there is. Add \
         the CRD's file to the `crds` directory, or fix the name (kinds are case-sensitive: `HTTPRoute`). \
         An `http_route` item is a `gateway.networking.k8s.io/v1` HTTPRoute: the app's `crds` must define it \
         (the Gateway API's `gateway.networking.k8s.io_httproutes.yaml`) for the route to be checked.";
    AmbiguousCustomKind = "PCL0236", Rejected, "a `resource`'s short kind is defined by several CRDs",
        "`resource KIND NAME` finds the kind by its name alone when one CRD (and one served version) \
         defines it. Several do (two groups with a `Certificate`, or a CRD serving several versions); the \
         message lists them. Write the whole name: `resource GROUP/VERSION/KIND NAME { … }`.";
    CustomResourceScope = "PCL0237", Rejected, "a cluster-scoped custom resource is given a namespace",
        "A CustomResourceDefinition says whether its objects live in a namespace (`scope: Namespaced`, \
         deployed to the target's namespace like the app's other objects) or in the cluster \
         (`scope: Cluster`, no namespace, a name unique in the whole cluster). A `namespace:` key was \
         given to a `resource` whose kind is cluster-scoped; remove it. Namespaced resources go to the \
         target's namespace, as the app's other objects do.";
    CrdNotServed = "PCL0238", Rejected, "the cluster does not serve a custom resource kind the app declares",
        "A `resource` item's kind comes from a CustomResourceDefinition that the cluster does not serve \
         (the CRD is not installed, or not this version), and the app does not install it: `plan` stops \
         before anything is applied. Install the project's CRDs first (e.g. the Gateway API's standard \
         channel), or let the app apply them before its objects with `crds \"DIR\" { install: true }` \
         (the engine's CRD rules apply: a CRD change that would strand stored objects is refused).";
    UnknownCustomRef = "PCL0239", Rejected, "a custom resource names an object of the app that is not declared",
        "For a few custom resource kinds Piceli knows which fields name other objects and checks them like \
         the built-in references: a Gateway API `HTTPRoute`'s or `GRPCRoute`'s `parentRefs` (a `resource` \
         Gateway of the app; a Gateway of another namespace, written with `namespace:`, is someone \
         else's), a cert-manager `Certificate`'s `issuerRef` (an `Issuer` resource of the app; a \
         `ClusterIssuer` is cluster-wide and may be someone else's) and a Prometheus Operator \
         `ServiceMonitor`'s `selector` (it must select a Service of the app) and `PodMonitor`'s (it must \
         select pods of a workload of the app: `selector: (pods NAME)` writes those labels). The name \
         refers to nothing \
         the app declares; the help names the closest. Backend Services and their ports are checked as \
         PCL0022 and PCL0023; docs/dsl.md lists every reference checked.";
    OperatorFeatureOff = "PCL0240", Rejected, "the app declares controllers or webhooks, but piceli's `operator` feature is off",
        "Controllers, admission webhooks and `serve` (kube's runtime, the HTTPS server) are piceli's \
         operator half, compiled only when the app turns on the `operator` feature, so an app that only \
         deploys builds without them. Turn it on in the app's Cargo.toml: `piceli = { version = \"0.1\", \
         features = [\"operator\"] }` (`piceli new --operator` writes it).";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_well_formed() {
        let mut seen = std::collections::HashSet::new();
        for info in ALL {
            assert!(seen.insert(info.code), "duplicate {}", info.code);
            assert_eq!(info.code.len(), 7);
            assert!(info.code.starts_with("PCL"));
            assert!(info.code[3..].chars().all(|c| c.is_ascii_digit()));
            assert!(!info.explanation.is_empty());
        }
    }

    #[test]
    fn errors_doc_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/errors.md");
        let want = markdown();
        if std::env::var_os("PICELI_UPDATE_DOCS").is_some() {
            std::fs::write(&path, &want).expect("write docs/errors.md");
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "docs/errors.md is stale: run PICELI_UPDATE_DOCS=1 cargo test -p piceli-core"
        );
    }

    #[test]
    fn compile_time_codes_reject_and_the_journal_has_one_class_per_code() {
        for info in ALL.iter().filter(|i| i.code.starts_with("PCL00")) {
            assert_eq!(info.exit_class, ExitClass::Rejected, "{}", info.code);
        }
        assert_eq!(Code::JournalFailed.exit_class(), ExitClass::Failed);
        assert_eq!(Code::JournalNewer.exit_class(), ExitClass::Rejected);
        assert_eq!(Code::UnknownStep.exit_class(), ExitClass::Rejected);
    }

    #[test]
    fn lookup_accepts_forms() {
        assert_eq!(lookup("PCL0016").map(|i| i.code), Some("PCL0016"));
        assert_eq!(lookup("pcl16").map(|i| i.code), Some("PCL0016"));
        assert_eq!(lookup("16").map(|i| i.code), Some("PCL0016"));
        assert!(lookup("PCL9999").is_none());
        assert!(lookup("nonsense").is_none());
    }
}
