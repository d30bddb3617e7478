// The Reader module; its contents arrive with the foundation work.
