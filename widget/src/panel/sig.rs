//! The panel's one piece of reactivity: a value that tells its watchers when it is set.
//!
//! No dependency tracking, no scheduler: a view says which values it shows with [`Sig::watch`]
//! and redraws its part of the page when one of them is set. A `Sig` is a `Copy` handle, so
//! every closure and task can hold the panel's state; its value and its watchers live as long as
//! the page (the panel makes a few per message, so a page holds every message it has shown since
//! it loaded, also those a reset took off the screen — as the Leptos signals before it did).

use std::cell::RefCell;
use std::rc::Rc;

struct Inner<T> {
    value: RefCell<T>,
    watchers: RefCell<Vec<Rc<dyn Fn()>>>,
}

/// A value and the functions to call when it is set.
pub struct Sig<T: 'static>(&'static Inner<T>);

impl<T> Clone for Sig<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Sig<T> {}

impl<T: 'static> Sig<T> {
    pub fn new(value: T) -> Sig<T> {
        Sig(Box::leak(Box::new(Inner { value: RefCell::new(value), watchers: RefCell::new(Vec::new()) })))
    }

    /// Reads the value (its watchers are not told of anything).
    pub fn with<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        f(&self.0.value.borrow())
    }

    /// A copy of the value.
    pub fn get(&self) -> T
    where
        T: Clone,
    {
        self.0.value.borrow().clone()
    }

    /// Replaces the value and tells the watchers.
    pub fn set(&self, value: T) {
        *self.0.value.borrow_mut() = value;
        self.notify();
    }

    /// Changes the value in place and tells the watchers.
    pub fn update<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let out = f(&mut self.0.value.borrow_mut());
        self.notify();
        out
    }

    /// Replaces the value without telling anyone (state no view shows).
    pub fn set_value(&self, value: T) {
        *self.0.value.borrow_mut() = value;
    }

    /// Takes the value out (leaving the default) and tells the watchers.
    pub fn take(&self) -> T
    where
        T: Default,
    {
        self.update(std::mem::take)
    }

    /// Whether both handles are the same value (not merely equal ones).
    pub fn same(&self, other: &Sig<T>) -> bool {
        std::ptr::eq(self.0, other.0)
    }

    /// Calls `f` each time the value is set (not now).
    pub fn watch(&self, f: impl Fn() + 'static) {
        self.0.watchers.borrow_mut().push(Rc::new(f));
    }

    fn notify(&self) {
        // A copy of the list: a watcher may read this value, set others, or add watchers.
        let watchers = self.0.watchers.borrow().clone();
        for w in watchers {
            w();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Sig;

    #[test]
    fn watchers_hear_every_set_and_may_read_and_write() {
        let count = Sig::new(0);
        let seen = Sig::new(Vec::<i32>::new());
        count.watch(move || seen.set_value(seen.get().into_iter().chain([count.get()]).collect()));
        count.set(1);
        count.update(|c| *c += 1);
        count.set_value(7);
        assert_eq!(seen.get(), vec![1, 2], "set_value tells no one");
        assert_eq!(count.take(), 7);
        assert_eq!(seen.get(), vec![1, 2, 0]);
    }
}
