//! The memory order of an array's data in a file.

/// Where consecutive elements of the data lie: NumPy's `order='C'` (the last
/// axis varies fastest, `fortran_order: False`) or `order='F'` (the first
/// axis varies fastest, `fortran_order: True`).
///
/// ```
/// use ndnpy::Order;
/// assert!(Order::Fortran.is_fortran());
/// assert_eq!(Order::from_fortran(false), Order::C);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Order {
    /// Row-major: the last axis varies fastest.
    #[default]
    C,
    /// Column-major: the first axis varies fastest.
    Fortran,
}

impl Order {
    /// The order a header's `fortran_order` flag names.
    pub fn from_fortran(fortran_order: bool) -> Self {
        if fortran_order {
            Order::Fortran
        } else {
            Order::C
        }
    }

    /// The header's `fortran_order` flag for this order.
    pub fn is_fortran(self) -> bool {
        self == Order::Fortran
    }
}
