//! A state that snapshots itself: every field of the session is declared
//! with what a failed command does to it (its [`Policy`]), and
//! [`transactional!`] makes, from that one declaration, the struct, its
//! `Checkpoint` (one mark per field) and `checkpoint`/`restore_fields`. A
//! field cannot be added without a policy, so none can escape the
//! transaction (evcxr's session snapshots itself the same way, by running
//! a command on a copy; copying LLVM modules per command would cost too
//! much, so passlab notes what it needs to undo instead).
//!
//! The policies:
//! * [`Named`]: a map by name; names a command added are dropped (what it
//!   replaced by name comes back through the session's `displaced`).
//! * [`Stack`]: entries a command pushed are popped.
//! * [`Value`]: the value as it was (a clone: names, shared results).
//! * [`Specs`]: the `:with` contexts; those a command entered are left (the
//!   session enters again those it left, which needs the whole session).
//! * [`Kept`]: not the transaction's — the front end's settings, caches
//!   that check themselves, the command's own scratch.

use std::collections::{BTreeMap, BTreeSet};

/// What a failed command does to a field of type `T`: what to note before
/// it runs, and how to put the field back from that note.
pub(super) trait Policy<T> {
    type Mark;
    fn mark(value: &T) -> Self::Mark;
    fn restore(value: &mut T, mark: Self::Mark);
}

/// A map by name: the names there before are kept, the rest dropped.
pub(super) struct Named;
impl<V> Policy<BTreeMap<String, V>> for Named {
    type Mark = BTreeSet<String>;
    fn mark(value: &BTreeMap<String, V>) -> Self::Mark {
        value.keys().cloned().collect()
    }
    fn restore(value: &mut BTreeMap<String, V>, mark: Self::Mark) {
        value.retain(|name, _| mark.contains(name));
    }
}

/// A stack: what was pushed is popped.
pub(super) struct Stack;
impl<V> Policy<Vec<V>> for Stack {
    type Mark = usize;
    fn mark(value: &Vec<V>) -> usize {
        value.len()
    }
    fn restore(value: &mut Vec<V>, mark: usize) {
        value.truncate(mark);
    }
}

/// A value put back as it was.
pub(super) struct Value;
impl<V: Clone> Policy<V> for Value {
    type Mark = V;
    fn mark(value: &V) -> V {
        value.clone()
    }
    fn restore(value: &mut V, mark: V) {
        *value = mark;
    }
}

/// Not rolled back (say why where the field is declared).
pub(super) struct Kept;
impl<V> Policy<V> for Kept {
    type Mark = ();
    fn mark(_: &V) {}
    fn restore(_: &mut V, _: ()) {}
}

/// Something with a spec it can be made again from (a `:with` context).
pub(super) trait HasSpec {
    fn spec(&self) -> &str;
}

/// Entries made from specs: those that differ from the noted specs, and
/// all after them, are dropped (innermost first); the caller makes again
/// those of the note that are missing (`mark[value.len()..]`).
pub(super) struct Specs;
impl<V: HasSpec> Policy<Vec<V>> for Specs {
    type Mark = Vec<String>;
    fn mark(value: &Vec<V>) -> Vec<String> {
        value.iter().map(|v| v.spec().to_string()).collect()
    }
    fn restore(value: &mut Vec<V>, mark: Vec<String>) {
        let same = value
            .iter()
            .zip(&mark)
            .take_while(|(now, then)| now.spec() == then.as_str())
            .count();
        while value.len() > same {
            value.pop();
        }
    }
}

/// Declares a struct whose every field names its [`Policy`]
/// (`field: Type => Policy,`), with a checkpoint type holding one mark per
/// field and two methods: `checkpoint(&self)` and
/// `restore_fields(&mut self, checkpoint)`.
macro_rules! transactional {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident, checkpoint $mark:ident {
            $( $(#[$fmeta:meta])* $field:ident : $ty:ty => $policy:ty, )*
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $( $(#[$fmeta])* $field: $ty, )*
        }

        /// What a command may change, noted before it runs: one mark per
        /// field, as its policy says.
        struct $mark {
            $( $field: <$policy as $crate::session::state::Policy<$ty>>::Mark, )*
        }

        impl $name {
            fn checkpoint(&self) -> $mark {
                $mark {
                    $( $field: <$policy as $crate::session::state::Policy<$ty>>::mark(&self.$field), )*
                }
            }

            /// Puts every field back as its policy says.
            fn restore_fields(&mut self, mark: $mark) {
                $( <$policy as $crate::session::state::Policy<$ty>>::restore(&mut self.$field, mark.$field); )*
            }
        }
    };
}
pub(super) use transactional;

#[cfg(test)]
mod tests {
    use super::*;

    struct Scope(String);
    impl HasSpec for Scope {
        fn spec(&self) -> &str {
            &self.0
        }
    }

    transactional! {
        struct Before, checkpoint BeforeMark {
            names: BTreeMap<String, u32> => Named,
            log: Vec<u32> => Stack,
            current: Option<String> => Value,
            scopes: Vec<Scope> => Specs,
            html: bool => Kept,
        }
    }

    // The same state with a field added: declaring it needs its policy,
    // and the checkpoint then covers it with nothing else written.
    transactional! {
        struct After, checkpoint AfterMark {
            names: BTreeMap<String, u32> => Named,
            log: Vec<u32> => Stack,
            current: Option<String> => Value,
            scopes: Vec<Scope> => Specs,
            html: bool => Kept,
            added: Vec<String> => Stack,
        }
    }

    #[test]
    fn every_field_is_put_back_as_its_policy_says() {
        let mut s = Before {
            names: BTreeMap::from([("a".to_string(), 1)]),
            log: vec![1, 2],
            current: Some("a".into()),
            scopes: vec![Scope("O2".into()), Scope("O3".into())],
            html: true,
        };
        let c = s.checkpoint();
        s.names.insert("b".into(), 2);
        s.log.push(3);
        s.current = Some("b".into());
        s.scopes.pop();
        s.scopes.push(Scope("Oz".into()));
        s.scopes.push(Scope("O1".into()));
        s.html = false;
        let specs = c.scopes.clone();
        s.restore_fields(c);
        assert_eq!(s.names.keys().collect::<Vec<_>>(), ["a"]);
        assert_eq!(s.log, [1, 2]);
        assert_eq!(s.current.as_deref(), Some("a"));
        // The contexts that differ are left; the caller enters O3 again.
        assert_eq!(s.scopes.len(), 1);
        assert_eq!(&specs[s.scopes.len()..], ["O3"]);
        assert!(!s.html, "a kept field stays as the command left it");
    }

    #[test]
    fn a_field_added_to_the_state_is_in_the_transaction() {
        let mut s = After {
            names: BTreeMap::new(),
            log: vec![],
            current: None,
            scopes: vec![],
            html: true,
            added: vec!["kept".into()],
        };
        let c = s.checkpoint();
        s.added.push("made by a failed command".into());
        s.names.insert("x".into(), 1);
        s.restore_fields(c);
        assert_eq!(s.added, ["kept"]);
        assert!(s.names.is_empty());
    }
}
