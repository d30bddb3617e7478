// The CounterStore module; its contents arrive with the foundation work.
