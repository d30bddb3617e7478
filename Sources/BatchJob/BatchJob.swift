// The BatchJob module; its contents arrive with the foundation work.
