// The SQLiteDB module; its contents arrive with the foundation work.
