//! `#[derive(Stats)]`: the named figures of a mobmem result type, listed from its fields.
//!
//! The listing follows the struct's declaration order. A field of a number type is one
//! figure under its own name: an integer (`u64`, `usize`, `u32`) a counter, an `f64` a
//! real figure, an `Option<f64>` a figure that may be missing (NaN). A field of any other
//! type (names, lists, parts) is left out unless marked. Attributes, in `#[stats(...)]`:
//!
//! - `skip`: leave a number field out;
//! - `rename = "name"`: list the field under another name;
//! - `nest`: list the field's own figures (a type that implements `Stats`) in place;
//! - `then(name = expr, ...)`: after the field (or in its place, with `skip`), list
//!   figures computed from `self`, each an expression of one of the number types above.
//!
//! The generated code names `crate::core::stats`, so the derive serves mobmem's own types.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as Tokens;
use quote::quote;
use syn::{parse_macro_input, Data, DeriveInput, Expr, Fields, Ident, LitStr, Type};

#[proc_macro_derive(Stats, attributes(stats))]
pub fn derive_stats(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match listing(&input) {
        Ok(body) => {
            let name = &input.ident;
            let (impl_generics, type_generics, where_clause) = input.generics.split_for_impl();
            quote! {
                impl #impl_generics crate::core::stats::Stats for #name #type_generics #where_clause {
                    fn visit(&self, v: &mut dyn crate::core::stats::Visitor) {
                        #body
                    }
                }
            }
            .into()
        }
        Err(e) => e.to_compile_error().into(),
    }
}

/// What a field's attributes say.
#[derive(Default)]
struct FieldAttrs {
    skip: bool,
    nest: bool,
    rename: Option<LitStr>,
    then: Vec<(Ident, Expr)>,
}

fn field_attrs(field: &syn::Field) -> syn::Result<FieldAttrs> {
    let mut out = FieldAttrs::default();
    for attr in field.attrs.iter().filter(|a| a.path().is_ident("stats")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("skip") {
                out.skip = true;
            } else if meta.path.is_ident("nest") {
                out.nest = true;
            } else if meta.path.is_ident("rename") {
                out.rename = Some(meta.value()?.parse()?);
            } else if meta.path.is_ident("then") {
                meta.parse_nested_meta(|figure| {
                    let name = figure.path.require_ident()?.clone();
                    out.then.push((name, figure.value()?.parse()?));
                    Ok(())
                })?;
            } else {
                return Err(meta.error("expected skip, nest, rename = \"...\" or then(...)"));
            }
            Ok(())
        })?;
    }
    Ok(out)
}

/// Whether a field of type `ty` is a figure by default: an integer, `f64` or
/// `Option<f64>`.
fn is_number(ty: &Type) -> bool {
    let Type::Path(path) = ty else {
        return false;
    };
    let Some(last) = path.path.segments.last() else {
        return false;
    };
    let name = last.ident.to_string();
    match name.as_str() {
        "u64" | "usize" | "u32" | "f64" => true,
        "Option" => match &last.arguments {
            syn::PathArguments::AngleBracketed(args) => {
                matches!(args.args.first(), Some(syn::GenericArgument::Type(t)) if is_number(t))
            }
            _ => false,
        },
        _ => false,
    }
}

fn listing(input: &DeriveInput) -> syn::Result<Tokens> {
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new_spanned(
            &input.ident,
            "Stats is derived for structs",
        ));
    };
    let Fields::Named(fields) = &data.fields else {
        return Err(syn::Error::new_spanned(
            &input.ident,
            "Stats needs named fields",
        ));
    };
    let mut body = Tokens::new();
    for field in &fields.named {
        let attrs = field_attrs(field)?;
        let ident = field.ident.as_ref().expect("named field");
        if attrs.nest {
            body.extend(quote! { v.nest(&self.#ident); });
        } else if !attrs.skip && is_number(&field.ty) {
            let name = match &attrs.rename {
                Some(name) => name.value(),
                None => ident.to_string(),
            };
            body.extend(quote! { crate::core::stats::Number::list(&self.#ident, #name, v); });
        } else if attrs.rename.is_some() {
            return Err(syn::Error::new_spanned(
                ident,
                "`rename` of a field that is not listed",
            ));
        }
        for (name, expr) in &attrs.then {
            let name = name.to_string();
            body.extend(quote! { crate::core::stats::Number::list(&(#expr), #name, v); });
        }
    }
    Ok(body)
}
