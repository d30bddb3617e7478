// The Kafka module; its contents arrive with the foundation work.
