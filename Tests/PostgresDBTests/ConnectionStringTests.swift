import Patience
import PostgresDB
import Testing

@Suite("Connection strings: read by libpq, shown without their password", .onTestThreads)
struct ConnectionStringTests {
    @Test("the password is hidden wherever a connection string holds it")
    func redaction() {
        let cases = [
            ("postgresql://counter:s3cret@db:5432/counts", "postgresql://counter:***@db:5432/counts"),
            ("postgres://counter:p%40ss@db/counts?sslmode=require", "postgres://counter:***@db/counts?sslmode=require"),
            ("postgresql://counter@db/counts?password=s3cret&sslmode=verify-full",
             "postgresql://counter@db/counts?password=***&sslmode=verify-full"),
            ("postgresql:///counts?host=/run/postgresql&password=s3cret", "postgresql:///counts?host=/run/postgresql&password=***"),
            ("host=db dbname=counts password='s3 cret' user=counter", "host=db dbname=counts password=*** user=counter"),
            ("host=db password = s3cret", "host=db password = ***"),
            ("postgresql://counter@db/counts", "postgresql://counter@db/counts"),
            ("postgresql://db1:5432,db2:5432/counts?target_session_attrs=read-write",
             "postgresql://db1:5432,db2:5432/counts?target_session_attrs=read-write"),
        ]
        for (given, shown) in cases {
            #expect(PostgresConnectionString.redacted(given) == shown, "\(given)")
        }
    }

    @Test("any text that repeats the password, decoded or as written, has it hidden too")
    func hidingInMessages() {
        let url = "postgresql://counter:p%40ss@db/counts"
        #expect(PostgresConnectionString.hidingPassword(of: url, in: "failed for p@ss and p%40ss") == "failed for *** and ***")
    }

    @Test("every libpq parameter is accepted; an unknown one is refused with libpq's message, password hidden")
    func validation() throws {
        for accepted in [
            "postgresql://counter@db1:5432,db2:5433/counts?target_session_attrs=read-write&sslmode=verify-full&sslrootcert=/ca.pem",
            "postgresql:///counts?host=/run/postgresql", "postgresql://", "postgres://u:p@h/d?application_name=x&connect_timeout=3",
        ] {
            #expect(throws: Never.self, "\(accepted)") { try PostgresConnectionString.validate(accepted) }
        }
        let error = try #require(throws: PostgresError.self) {
            try PostgresConnectionString.validate("postgresql://u:hunter2@db/counts?no_such_parameter=1")
        }
        #expect(error.description.contains("no_such_parameter"))
        #expect(!error.description.contains("hunter2"))
        let badEncoding = try #require(throws: PostgresError.self) {
            try PostgresConnectionString.validate("postgresql://u:hunter2%zz@db/counts")
        }
        #expect(!badEncoding.description.contains("hunter2"), "\(badEncoding)")
    }
}
