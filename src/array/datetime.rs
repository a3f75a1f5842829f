//! `datetime64` and `timedelta64`: [`Datetime64<U>`] and [`Timedelta64<U>`],
//! `i64` counts of a unit that the marker type `U` (from [`unit`]) fixes.

use crate::array::any::AnyArray;
use crate::array::element::LayoutElement;
use crate::format::dtype::{ByteOrder, DType, Kind, Scalar};
use ndarray::ArrayD;
use std::marker::PhantomData;

/// Unit markers for [`Datetime64`] and [`Timedelta64`], named as NumPy
/// spells the units (`as` is a Rust keyword, so attoseconds are `as_`).
///
/// ```
/// use ndnpy::{types::unit, types::Datetime64, Element};
///
/// assert_eq!(<Datetime64<unit::ns> as Element>::dtype().to_string(), "<M8[ns]");
/// assert_eq!(<Datetime64<unit::as_> as Element>::dtype().to_string(), "<M8[as]");
/// ```
pub mod unit {
    mod sealed {
        pub trait Sealed {}
    }

    /// A NumPy datetime unit.
    pub trait Unit:
        Copy
        + Eq
        + Ord
        + std::hash::Hash
        + Default
        + std::fmt::Debug
        + Send
        + Sync
        + 'static
        + sealed::Sealed
    {
        /// The unit as NumPy spells it between brackets.
        const NAME: &'static str;
    }

    macro_rules! units {
        ($($name:ident => $text:literal, $doc:literal;)*) => {$(
            #[doc = $doc]
            #[allow(non_camel_case_types)]
            #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
            pub struct $name;
            impl sealed::Sealed for $name {}
            impl Unit for $name {
                const NAME: &'static str = $text;
            }
        )*};
    }

    units! {
        Y => "Y", "Years (`[Y]`).";
        M => "M", "Months (`[M]`).";
        W => "W", "Weeks (`[W]`).";
        D => "D", "Days (`[D]`).";
        h => "h", "Hours (`[h]`).";
        m => "m", "Minutes (`[m]`).";
        s => "s", "Seconds (`[s]`).";
        ms => "ms", "Milliseconds (`[ms]`).";
        us => "us", "Microseconds (`[us]`).";
        ns => "ns", "Nanoseconds (`[ns]`).";
        ps => "ps", "Picoseconds (`[ps]`).";
        fs => "fs", "Femtoseconds (`[fs]`).";
        as_ => "as", "Attoseconds (`[as]`).";
    }
}

use unit::Unit;

macro_rules! time_type {
    ($name:ident, $kind:expr, $variant:ident, $what:literal, $code:literal) => {
        #[doc = concat!("A NumPy `", $what, "` value: an `i64` count of unit `U` (`<", $code, "8[U]`).")]
        ///
        /// NaT ("not a time") is `i64::MIN`, as in NumPy. A typed read
        /// accepts exactly the unit `U` without a multiplier; other units
        /// load through [`crate::AnyArray`], which carries the unit.
        ///
        /// ```
        #[doc = concat!("use ndnpy::types::{unit, ", stringify!($name), "};")]
        ///
        #[doc = concat!("let t = ", stringify!($name), "::<unit::ns>::new(1_500);")]
        /// assert_eq!(t.get(), 1_500);
        /// assert!(!t.is_nat());
        #[doc = concat!("assert!(", stringify!($name), "::<unit::s>::NAT.is_nat());")]
        /// ```
        #[repr(transparent)]
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name<U: Unit> {
            value: i64,
            unit: PhantomData<U>,
        }

        impl<U: Unit> $name<U> {
            /// Not a time.
            pub const NAT: Self = Self::new(i64::MIN);

            /// The value `count` units.
            pub const fn new(count: i64) -> Self {
                $name {
                    value: count,
                    unit: PhantomData,
                }
            }

            /// The count of units.
            pub const fn get(self) -> i64 {
                self.value
            }

            /// Whether this is NaT.
            pub const fn is_nat(self) -> bool {
                self.value == i64::MIN
            }
        }

        impl<U: Unit> std::fmt::Debug for $name<U> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                if self.is_nat() {
                    write!(f, concat!(stringify!($name), "<{}>(NaT)"), U::NAME)
                } else {
                    write!(f, concat!(stringify!($name), "<{}>({})"), U::NAME, self.value)
                }
            }
        }

        // SAFETY: `#[repr(transparent)]` over `i64` (the marker is a
        // zero-sized `PhantomData`), which an 8-byte native-order datetime
        // dtype describes exactly; every bit pattern is valid.
        unsafe impl<U: Unit> LayoutElement for $name<U> {
            fn layout_dtype() -> DType {
                DType::Scalar(Scalar {
                    order: ByteOrder::NATIVE,
                    kind: $kind,
                    size: 8,
                    unit: Some(U::NAME.to_owned()),
                })
            }

            fn layout_into_any(array: ArrayD<Self>) -> AnyArray {
                AnyArray::$variant {
                    array: array.mapv(Self::get),
                    unit: Some(U::NAME.to_owned()),
                }
            }

            fn layout_from_any(array: AnyArray) -> std::result::Result<ArrayD<Self>, AnyArray> {
                match array {
                    AnyArray::$variant { array, unit } if unit.as_deref() == Some(U::NAME) => {
                        Ok(array.mapv(Self::new))
                    }
                    other => Err(other),
                }
            }
        }
    };
}

time_type!(Datetime64, Kind::Datetime, Datetime64, "datetime64", "M");
time_type!(
    Timedelta64,
    Kind::Timedelta,
    Timedelta64,
    "timedelta64",
    "m"
);
