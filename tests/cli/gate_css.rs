//! The output gate reads CSS: a theme that puts a script URL or a CSS
//! expression in a `style` attribute, a `<style>` element or its
//! stylesheet publishes nothing, and the refusal names each place.

use super::script::refused_on_every_page;
use super::*;

/// A themed build of the minimal campaign: its base template with `plant`
/// at the top of `<head>`, and `css` (when given) as the stylesheet.
fn themed(name: &str, plant: &str, css: Option<&str>) -> (Output, PathBuf) {
    let dir = fixture("minimal");
    seal(&dir);
    let out = dir.parent().unwrap().join(format!("site-{name}"));
    let theme = dir.parent().unwrap().join(format!("theme-{name}"));
    std::fs::create_dir_all(theme.join("templates")).unwrap();
    let base = read(&repo().join("templates/base.html")).replacen(
        "<head>",
        &format!("<head>\n{plant}"),
        1,
    );
    std::fs::write(theme.join("templates/base.html"), base).unwrap();
    if let Some(css) = css {
        std::fs::create_dir_all(theme.join("assets")).unwrap();
        std::fs::write(theme.join("assets/style.css"), css).unwrap();
    }
    (build_themed(&dir, &out, &theme), out)
}

#[test]
fn script_in_a_style_attribute_or_element_is_refused() {
    for (plant, col, why) in [
        (
            "<meta name=x style=\"background:url(javascript:alert(1))\">",
            14,
            "a javascript: URL",
        ),
        (
            "<style>p{background:URL( 'data:text/html,<b>x</b>' )}</style>",
            8,
            "a data: URL of a type that can run script",
        ),
        (
            "<style>p{width:expr/**/ession(alert(1))}</style>",
            8,
            "a CSS expression()",
        ),
    ] {
        let (o, out) = themed("element", plant, None);
        assert_eq!(o.status.code(), Some(1), "{plant}: {}", stderr(&o));
        assert_eq!(stderr(&o), refused_on_every_page(col, why), "{plant}");
        assert!(!out.exists(), "{plant}: nothing is published");
    }
}

#[test]
fn script_in_the_stylesheet_is_refused_and_an_image_url_is_not() {
    let css = "body { color: #222 }\nhtml { scroll-behavior: smooth }\n.x { background: url(\"j\\61vascript:alert(1)\") }\n";
    let (o, out) = themed("sheet", "", Some(css));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    let sheet = err
        .lines()
        .find(|l| l.contains(".css:"))
        .unwrap_or_else(|| panic!("the stylesheet is named: {err}"));
    assert!(
        sheet.starts_with("  assets/style.") && sheet.ends_with(".css:3:1: a javascript: URL"),
        "{sheet}"
    );
    assert_eq!(err.lines().count(), 2, "only the stylesheet: {err}");
    assert!(!out.exists());

    let css = "html { scroll-behavior: smooth }\n.x { background: url(data:image/svg+xml,%3Csvg%3E%3C/svg%3E) }\n";
    let (o, out) = themed("image", "<style>b{color:red}</style>", Some(css));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(read(&out.join("index.html")).contains("b{color:red}"));
}
