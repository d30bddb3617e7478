import ArgumentParser
import Foundation
import Kafka

/// `--kafka-option` and `--kafka-config` of the commands that talk to Kafka (`run`, `consume`,
/// `archive`, `replay`): librdkafka properties passed through as `kcat -X` and `-F` take them,
/// the file first, then each option in order. Neither has a default to show in `--help`: the
/// environment is read here, not as a default, so a secret in it never reaches `--help`.
struct KafkaFlags: ParsableArguments {
    @Option(name: .customLong("kafka-option"), help: ArgumentHelp("""
        A librdkafka property set after the program's own, as kcat -X takes it (repeatable), e.g. \
        security.protocol=sasl_ssl or ssl.ca.location=/etc/ssl/kafka-ca.pem. Put secrets \
        (sasl.password, ssl.key.password) in --kafka-config instead: every user of the machine \
        can read a command line (env COUNTERPOINT_KAFKA_OPTION, one property per line).
        """, valueName: "key=value"))
    var kafkaOption: [String] = []

    @Option(name: .customLong("kafka-config"), help: ArgumentHelp("""
        A file of librdkafka properties, as kcat -F reads it: key=value lines, # comments; set \
        before the --kafka-option ones (env COUNTERPOINT_KAFKA_CONFIG).
        """, valueName: "file"))
    var kafkaConfig: String?

    func validate() throws {
        _ = try clientOptions()
    }

    /// The properties given, in the order librdkafka gets them.
    func clientOptions() throws -> KafkaClientOptions {
        var options = KafkaClientOptions()
        do {
            if let file = kafkaConfig ?? Environment.optionalString("kafka-config"), !file.isEmpty {
                try options.add(fileAt: file)
            }
            let arguments = kafkaOption.isEmpty
                ? (Environment.optionalString("kafka-option") ?? "").split(whereSeparator: \.isNewline).map(String.init)
                : kafkaOption
            for (index, argument) in arguments.enumerated() where !argument.isEmpty {
                try options.add(argument: argument, describedAs: "--kafka-option #\(index + 1)")
            }
        } catch {
            throw ValidationError(error.message)
        }
        return options
    }
}
