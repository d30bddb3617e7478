// The Generator module; its contents arrive with the foundation work.
