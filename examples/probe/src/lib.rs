//! Versions of one app, `probe`, for the deploy and checks tests (each binary in `src/bin/` is one
//! version; they share the state directory `.piceli/probe/local/`), and the code checks they name.

/// The image of version 1.
pub const IMAGE_V1: &str = "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d";
/// The image of version 2.
pub const IMAGE_V2: &str = "docker.io/library/nginx:1.28@sha256:1111111111111111111111111111111111111111111111111111111111111111";

/// Code checks.
pub mod checks {
    use piceli::checks::{CheckContext, CheckError};

    /// The web Service answers `/` with 200.
    pub async fn web_answers(cx: CheckContext) -> Result<(), CheckError> {
        let page = cx.http_get("web", "/").await?;
        if page.status != 200 {
            return Err(CheckError::new(format!("GET / answered {}", page.status)));
        }
        Ok(())
    }

    /// The web Service's front page says `Welcome`.
    pub async fn welcome_page(cx: CheckContext) -> Result<(), CheckError> {
        let page = cx.http_get("web", "/").await?;
        if !page.body.contains("Welcome") {
            return Err(CheckError::new(format!(
                "no `Welcome` on the front page: {:?}",
                page.body
            )));
        }
        Ok(())
    }
}
