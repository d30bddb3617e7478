// The HTTPServer module; its contents arrive with the foundation work.
