#include "config/units.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "sim/check.h"

namespace clustersim::sim {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

// Succeeds when `p` failed with an error containing `needle`.
template <class T>
::testing::AssertionResult fails_with(const Parsed<T>& p, std::string_view needle) {
  if (p) return ::testing::AssertionFailure() << "parsed successfully";
  if (p.error.find(needle) == std::string::npos) {
    return ::testing::AssertionFailure() << "error \"" << p.error << "\" lacks \"" << needle << '"';
  }
  return ::testing::AssertionSuccess();
}

int64_t bytes(std::string_view text, std::string_view bare_unit = "B") {
  const Parsed<int64_t> p = parse_bytes(text, bare_unit);
  EXPECT_TRUE(p) << text << ": " << p.error;
  return p ? *p : -1;
}

double bandwidth(std::string_view text, std::string_view bare_unit = "B/s") {
  const Parsed<double> p = parse_bandwidth(text, bare_unit);
  EXPECT_TRUE(p) << text << ": " << p.error;
  return p ? *p : -1;
}

int64_t duration_ns(std::string_view text, std::string_view bare_unit = "") {
  const Parsed<SimTime> p = parse_duration(text, bare_unit);
  EXPECT_TRUE(p) << text << ": " << p.error;
  return p ? p->count_ns() : -1;
}

// ---------------------------------------------------------------------------
// Sizes

TEST(ParseBytes, EveryUnit) {
  EXPECT_EQ(bytes("3B"), 3);
  EXPECT_EQ(bytes("3KB"), 3'000);
  EXPECT_EQ(bytes("3MB"), 3'000'000);
  EXPECT_EQ(bytes("3GB"), 3'000'000'000);
  EXPECT_EQ(bytes("3TB"), 3'000'000'000'000);
  EXPECT_EQ(bytes("3PB"), 3'000'000'000'000'000);
  EXPECT_EQ(bytes("3KiB"), 3 * (int64_t{1} << 10));
  EXPECT_EQ(bytes("3MiB"), 3 * (int64_t{1} << 20));
  EXPECT_EQ(bytes("3GiB"), 3 * (int64_t{1} << 30));
  EXPECT_EQ(bytes("3TiB"), 3 * (int64_t{1} << 40));
  EXPECT_EQ(bytes("3PiB"), 3 * (int64_t{1} << 50));
}

TEST(ParseBytes, ExamplesFromTheContract) {
  EXPECT_EQ(bytes("80GiB"), 85899345920);
  EXPECT_EQ(bytes("512MB"), 512000000);
  EXPECT_EQ(bytes("1.5GiB"), 1610612736);
  EXPECT_EQ(bytes("1e3 KB"), 1000000);
  EXPECT_EQ(bytes("1024"), 1024);
}

TEST(ParseBytes, DecimalsAreExact) {
  EXPECT_EQ(bytes("0.1GB"), 100000000);
  EXPECT_EQ(bytes("0.3GB"), 300000000);
  EXPECT_EQ(bytes("1.001KB"), 1001);
  EXPECT_EQ(bytes("0.25KiB"), 256);
  EXPECT_EQ(bytes("0.0009765625MiB"), 1024);
  EXPECT_EQ(bytes(".5KB"), 500);
  EXPECT_EQ(bytes("5.KB"), 5000);
  EXPECT_EQ(bytes("0.000000000000001PB"), 1);
  EXPECT_EQ(bytes("001.500KB"), 1500);
  EXPECT_EQ(bytes("1.000000000000000000000000000000KB"), 1000);
}

TEST(ParseBytes, Exponents) {
  EXPECT_EQ(bytes("1e9"), 1000000000);
  EXPECT_EQ(bytes("1E9B"), 1000000000);
  EXPECT_EQ(bytes("2.5E-3MB"), 2500);
  EXPECT_EQ(bytes("1e+3KB"), 1000000);
  EXPECT_EQ(bytes("1e-3KB"), 1);
  EXPECT_EQ(bytes("150e-2KiB"), 1536);
  EXPECT_EQ(bytes("0e999999999999GB"), 0);
}

TEST(ParseBytes, WhitespaceAndSigns) {
  EXPECT_EQ(bytes("80 GiB"), 85899345920);
  EXPECT_EQ(bytes("80\tGiB"), 85899345920);
  EXPECT_EQ(bytes("  80GiB  "), 85899345920);
  EXPECT_EQ(bytes("+5GB"), 5000000000);
  // Sign is the caller's business.
  EXPECT_EQ(bytes("-5GB"), -5000000000);
  EXPECT_EQ(bytes("-0B"), 0);
  EXPECT_EQ(bytes("0"), 0);
}

TEST(ParseBytes, BareNumberUsesBareUnit) {
  EXPECT_EQ(bytes("4", "GiB"), 4 * (int64_t{1} << 30));
  EXPECT_EQ(bytes("4KB", "GiB"), 4000);
  EXPECT_TRUE(fails_with(parse_bytes("4", ""), "missing unit"));
  EXPECT_TRUE(fails_with(parse_bytes("4", ""), "GiB"));
}

TEST(ParseBytes, BareUnitMustBeASizeUnit) {
  EXPECT_THROW(parse_bytes("4", "GB/s"), InvariantError);
}

TEST(ParseBytes, Int64Edge) {
  EXPECT_EQ(bytes("9223372036854775807B"), kInt64Max);
  EXPECT_EQ(bytes("9223372036854775807"), kInt64Max);
  EXPECT_EQ(bytes("9.223372036854775807e18"), kInt64Max);
  EXPECT_TRUE(fails_with(parse_bytes("9223372036854775808B"), "overflows a 64-bit integer"));
  EXPECT_EQ(bytes("-9223372036854775808B"), kInt64Min);
  EXPECT_TRUE(fails_with(parse_bytes("-9223372036854775809B"), "overflows a 64-bit integer"));
  // 8 EiB = 2^63 = 8192 PiB; one byte less fits.
  EXPECT_TRUE(fails_with(parse_bytes("8192PiB"), "overflows"));
  EXPECT_EQ(bytes("-8192PiB"), kInt64Min);
}

TEST(ParseBytes, OverflowNamesTheLimit) {
  const Parsed<int64_t> p = parse_bytes("9000PiB");
  EXPECT_TRUE(fails_with(p, "overflows a 64-bit integer"));
  EXPECT_TRUE(fails_with(p, "about 8 EiB"));
  EXPECT_TRUE(fails_with(parse_bytes("1e19B"), "overflows"));
  EXPECT_TRUE(fails_with(parse_bytes("1e999999999999999999GB"), "overflows"));
  EXPECT_TRUE(fails_with(parse_bytes("100000000000000000000000000000000000B"), "overflows"));
}

TEST(ParseBytes, MustBeWholeBytes) {
  EXPECT_TRUE(fails_with(parse_bytes("0.5B"), "not a whole number of bytes"));
  EXPECT_TRUE(fails_with(parse_bytes("1.0001KB"), "not a whole number of bytes"));
  EXPECT_TRUE(fails_with(parse_bytes("0.1KiB"), "not a whole number of bytes"));
  EXPECT_TRUE(fails_with(parse_bytes("1e-999999GB"), "not a whole number of bytes"));
}

TEST(ParseBytes, TooManyDigits) {
  EXPECT_TRUE(fails_with(parse_bytes("1.000000000000000000000000000000000000001KB"),
                         "too many significant digits"));
}

TEST(ParseBytes, BitsAreNotSizes) {
  const Parsed<int64_t> p = parse_bytes("80Gb");
  EXPECT_TRUE(fails_with(p, "did you mean 'GB'"));
  EXPECT_TRUE(fails_with(p, "bytes"));
  EXPECT_TRUE(fails_with(parse_bytes("80Gib"), "did you mean 'GiB'"));
  EXPECT_TRUE(fails_with(parse_bytes("80b"), "did you mean 'B'"));
  EXPECT_TRUE(fails_with(parse_bytes("80 bits"), "did you mean 'B'"));
}

TEST(ParseBytes, CaseDifferencesGetDidYouMean) {
  EXPECT_TRUE(fails_with(parse_bytes("80gb"), "did you mean 'GB'"));
  EXPECT_TRUE(fails_with(parse_bytes("80gb"), "case-sensitive"));
  EXPECT_TRUE(fails_with(parse_bytes("80GIB"), "did you mean 'GiB'"));
  EXPECT_TRUE(fails_with(parse_bytes("80kB"), "did you mean 'KB'"));
}

TEST(ParseBytes, CommonSlips) {
  EXPECT_TRUE(fails_with(parse_bytes("80G"), "did you mean 'GB' or 'GiB'"));
  EXPECT_TRUE(fails_with(parse_bytes("80k"), "did you mean 'KB' or 'KiB'"));
  EXPECT_TRUE(fails_with(parse_bytes("80Gi"), "did you mean 'GiB'"));
  EXPECT_TRUE(fails_with(parse_bytes("80 bytes"), "did you mean 'B'"));
  EXPECT_TRUE(fails_with(parse_bytes("8EiB"), "use PB or PiB"));
  EXPECT_TRUE(fails_with(parse_bytes("80GiB/s"), "bandwidth"));
  EXPECT_TRUE(fails_with(parse_bytes("80GiB/s"), "did you mean 'GiB'"));
  EXPECT_TRUE(fails_with(parse_bytes("80s"), "'s' is a unit of duration"));
}

TEST(ParseBytes, UnknownUnitListsAcceptedAndClosest) {
  const Parsed<int64_t> p = parse_bytes("80Gx");
  EXPECT_TRUE(fails_with(p, "unknown size unit 'Gx'"));
  EXPECT_TRUE(fails_with(p, "did you mean 'GB'"));
  EXPECT_TRUE(fails_with(p, "accepted units: B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB"));
  const Parsed<int64_t> far = parse_bytes("80parsecs");
  EXPECT_TRUE(fails_with(far, "unknown size unit 'parsecs'; accepted units: B, KB"));
  EXPECT_EQ(far.error.find("did you mean"), std::string::npos) << far.error;
}

TEST(ParseBytes, SyntaxErrors) {
  EXPECT_TRUE(fails_with(parse_bytes(""), "empty value"));
  EXPECT_TRUE(fails_with(parse_bytes("   "), "empty value"));
  EXPECT_TRUE(fails_with(parse_bytes("GB"), "missing number before the unit 'GB'"));
  EXPECT_TRUE(fails_with(parse_bytes("12 34GB"), "unexpected second number '34' after '12'"));
  EXPECT_TRUE(fails_with(parse_bytes("1..5GB"), "more than one decimal point"));
  EXPECT_TRUE(fails_with(parse_bytes("1.2.3GB"), "more than one decimal point"));
  EXPECT_TRUE(fails_with(parse_bytes(".GB"), "expected digits around the decimal point"));
  EXPECT_TRUE(fails_with(parse_bytes("80GiB!"), "unexpected '!' after the unit 'GiB'"));
  EXPECT_TRUE(fails_with(parse_bytes("80 GiB extra"), "unexpected 'extra' after the unit 'GiB'"));
  EXPECT_TRUE(fails_with(parse_bytes("80#"), "unexpected '#' after the number '80'"));
  EXPECT_TRUE(fails_with(parse_bytes("1,000GB"), "digit separator ','"));
  EXPECT_TRUE(fails_with(parse_bytes("1_000GB"), "digit separator '_'"));
  EXPECT_TRUE(fails_with(parse_bytes("-"), "expected a digit after the sign '-'"));
  EXPECT_TRUE(fails_with(parse_bytes("--5GB"), "expected a digit after the sign '-'"));
  EXPECT_TRUE(fails_with(parse_bytes("- 5GB"), "expected a digit after the sign '-'"));
  EXPECT_TRUE(fails_with(parse_bytes("#5"), "expected a number, found '#'"));
  EXPECT_TRUE(fails_with(parse_bytes("1e"), "incomplete exponent"));
  EXPECT_TRUE(fails_with(parse_bytes("1e+GB"), "incomplete exponent"));
  EXPECT_TRUE(fails_with(parse_bytes("1e5.5GB"), "exponent must be a whole number"));
}

TEST(ParseBytes, NanAndInfinityAreRejected) {
  for (std::string_view text :
       {"nan", "NaN", "inf", "-inf", "+Infinity", ".inf", ".nan", "infGB", "nan GB"}) {
    EXPECT_TRUE(fails_with(parse_bytes(text), "not a finite number")) << text;
  }
}

// ---------------------------------------------------------------------------
// Bandwidths

TEST(ParseBandwidth, EveryUnit) {
  EXPECT_EQ(bandwidth("8bps"), 1.0);
  EXPECT_EQ(bandwidth("8Kbps"), 1e3);
  EXPECT_EQ(bandwidth("8Mbps"), 1e6);
  EXPECT_EQ(bandwidth("8Gbps"), 1e9);
  EXPECT_EQ(bandwidth("8Tbps"), 1e12);
  EXPECT_EQ(bandwidth("8b/s"), 1.0);
  EXPECT_EQ(bandwidth("8Kb/s"), 1e3);
  EXPECT_EQ(bandwidth("8Mb/s"), 1e6);
  EXPECT_EQ(bandwidth("8Gb/s"), 1e9);
  EXPECT_EQ(bandwidth("8Tb/s"), 1e12);
  EXPECT_EQ(bandwidth("3B/s"), 3.0);
  EXPECT_EQ(bandwidth("3KB/s"), 3e3);
  EXPECT_EQ(bandwidth("3MB/s"), 3e6);
  EXPECT_EQ(bandwidth("3GB/s"), 3e9);
  EXPECT_EQ(bandwidth("3TB/s"), 3e12);
  EXPECT_EQ(bandwidth("3KiB/s"), 3.0 * 1024);
  EXPECT_EQ(bandwidth("3MiB/s"), 3.0 * 1024 * 1024);
  EXPECT_EQ(bandwidth("3GiB/s"), 3.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(bandwidth("3TiB/s"), 3.0 * 1024 * 1024 * 1024 * 1024);
}

TEST(ParseBandwidth, ExamplesFromTheContract) {
  EXPECT_EQ(bandwidth("400Gbps"), 5e10);
  EXPECT_EQ(bandwidth("50GB/s"), 5e10);
  EXPECT_EQ(bandwidth("46.5 GB/s"), 4.65e10);
  EXPECT_EQ(bandwidth("100"), 100.0);
  EXPECT_EQ(bandwidth("100", "Gbps"), 1.25e10);
}

TEST(ParseBandwidth, CorrectlyRounded) {
  // 0.1 * 1e9 in double arithmetic would be fine here, but 0.3 * 1e-3 is not;
  // the parser rounds the exact decimal once.
  EXPECT_EQ(bandwidth("0.1GB/s"), 1e8);
  EXPECT_EQ(bandwidth("0.3KB/s"), 300.0);
  EXPECT_EQ(bandwidth("2.4bps"), 0.3);
  EXPECT_EQ(bandwidth("1.5e2Gbps"), 1.875e10);
  EXPECT_EQ(bandwidth("-5GB/s"), -5e9);
  EXPECT_EQ(bandwidth("0Gbps"), 0.0);
}

TEST(ParseBandwidth, MustBeFinite) {
  EXPECT_TRUE(fails_with(parse_bandwidth("1e400GB/s"), "too large"));
  EXPECT_TRUE(fails_with(parse_bandwidth("1e-400B/s"), "too small"));
  EXPECT_TRUE(fails_with(parse_bandwidth("inf"), "not a finite number"));
  EXPECT_TRUE(fails_with(parse_bandwidth("nanGB/s"), "not a finite number"));
}

TEST(ParseBandwidth, UnitMistakes) {
  EXPECT_TRUE(fails_with(parse_bandwidth("50GBps"), "did you mean 'GB/s'"));
  EXPECT_TRUE(fails_with(parse_bandwidth("50GiBps"), "did you mean 'GiB/s'"));
  EXPECT_TRUE(fails_with(parse_bandwidth("50GB"), "did you mean 'GB/s'"));
  EXPECT_TRUE(fails_with(parse_bandwidth("50GB"), "'GB' is a unit of size"));
  EXPECT_TRUE(fails_with(parse_bandwidth("50Gb"), "did you mean 'Gb/s'"));
  EXPECT_TRUE(fails_with(parse_bandwidth("50GB/sec"), "did you mean 'GB/s'"));
  EXPECT_TRUE(fails_with(parse_bandwidth("10Gbit/s"), "did you mean 'Gb/s'"));
  EXPECT_TRUE(fails_with(parse_bandwidth("10G"), "did you mean 'Gbps' or 'GB/s'"));
  EXPECT_TRUE(fails_with(parse_bandwidth("10gbps"), "did you mean 'Gbps'"));
  EXPECT_TRUE(fails_with(parse_bandwidth("10gb/s"), "did you mean 'Gb/s' or 'GB/s'"));
  EXPECT_TRUE(fails_with(parse_bandwidth("10s"), "'s' is a unit of duration"));
  const Parsed<double> p = parse_bandwidth("10Gbpx");
  EXPECT_TRUE(fails_with(p, "unknown bandwidth unit 'Gbpx': did you mean 'Gbps'"));
  EXPECT_TRUE(fails_with(p, "accepted units: bps, Kbps"));
  EXPECT_TRUE(fails_with(parse_bandwidth("10", ""), "missing unit"));
}

TEST(ParseBandwidth, SyntaxErrors) {
  EXPECT_TRUE(fails_with(parse_bandwidth(""), "empty value"));
  EXPECT_TRUE(fails_with(parse_bandwidth("GB/s"), "missing number before the unit 'GB/s'"));
  EXPECT_TRUE(fails_with(parse_bandwidth("1..5GB/s"), "more than one decimal point"));
  EXPECT_TRUE(fails_with(parse_bandwidth("12 34GB/s"), "unexpected second number"));
  EXPECT_TRUE(fails_with(parse_bandwidth("50GB/s x"), "unexpected 'x' after the unit 'GB/s'"));
}

// ---------------------------------------------------------------------------
// Durations

TEST(ParseDuration, EveryUnit) {
  EXPECT_EQ(duration_ns("3ns"), 3);
  EXPECT_EQ(duration_ns("3us"), 3'000);
  EXPECT_EQ(duration_ns("3\xC2\xB5s"), 3'000);  // micro sign
  EXPECT_EQ(duration_ns("3\xCE\xBCs"), 3'000);  // Greek mu
  EXPECT_EQ(duration_ns("3ms"), 3'000'000);
  EXPECT_EQ(duration_ns("3s"), 3'000'000'000);
  EXPECT_EQ(duration_ns("3min"), 180'000'000'000);
  EXPECT_EQ(duration_ns("3h"), 10'800'000'000'000);
  EXPECT_EQ(duration_ns("3d"), 259'200'000'000'000);
}

TEST(ParseDuration, ExamplesFromTheContract) {
  EXPECT_EQ(duration_ns("2us"), 2000);
  EXPECT_EQ(duration_ns("10min"), SimTime::minutes(10).count_ns());
  EXPECT_EQ(duration_ns("54d"), SimTime::days(54).count_ns());
  EXPECT_EQ(duration_ns("1.5ms"), 1500000);
  EXPECT_EQ(duration_ns("600", "s"), SimTime::s(600).count_ns());
  EXPECT_EQ(duration_ns("1.5e3 ms"), SimTime::ms(1500).count_ns());
  EXPECT_EQ(duration_ns("0.1s"), 100'000'000);
  EXPECT_EQ(duration_ns("1e-9s"), 1);
  EXPECT_EQ(duration_ns("-5s"), -5'000'000'000);
}

TEST(ParseDuration, MustBeWholeNanoseconds) {
  EXPECT_TRUE(fails_with(parse_duration("0.5ns"), "not a whole number of nanoseconds"));
  EXPECT_TRUE(fails_with(parse_duration("1e-10s"), "not a whole number of nanoseconds"));
  EXPECT_TRUE(fails_with(parse_duration("1.0001us"), "not a whole number of nanoseconds"));
}

TEST(ParseDuration, BareNumberNeedsBareUnit) {
  const Parsed<SimTime> p = parse_duration("600");
  EXPECT_TRUE(fails_with(p, "missing unit"));
  EXPECT_TRUE(fails_with(p, "ns, us, \xC2\xB5s, ms, s, min, h, d"));
  EXPECT_THROW(parse_duration("600", "sec"), InvariantError);
}

TEST(ParseDuration, Overflow) {
  const Parsed<SimTime> p = parse_duration("1e20ns");
  EXPECT_TRUE(fails_with(p, "overflows a 64-bit integer"));
  EXPECT_TRUE(fails_with(p, "292 years"));
  EXPECT_TRUE(fails_with(parse_duration("106752d"), "overflows"));
  EXPECT_EQ(duration_ns("106751d"), SimTime::days(106751).count_ns());
  EXPECT_EQ(duration_ns("9223372036854775807ns"), kInt64Max);
  EXPECT_EQ(duration_ns("9223372036.854775807s"), kInt64Max);
  EXPECT_TRUE(fails_with(parse_duration("9223372036854775808ns"), "overflows"));
  EXPECT_EQ(duration_ns("-9223372036854775808ns"), kInt64Min);
}

TEST(ParseDuration, UnitMistakes) {
  EXPECT_TRUE(fails_with(parse_duration("5m"), "'m' is ambiguous"));
  EXPECT_TRUE(fails_with(parse_duration("5sec"), "did you mean 's'"));
  EXPECT_TRUE(fails_with(parse_duration("5 seconds"), "did you mean 's'"));
  EXPECT_TRUE(fails_with(parse_duration("5mins"), "did you mean 'min'"));
  EXPECT_TRUE(fails_with(parse_duration("5hours"), "did you mean 'h'"));
  EXPECT_TRUE(fails_with(parse_duration("5 days"), "did you mean 'd'"));
  EXPECT_TRUE(fails_with(parse_duration("5usec"), "did you mean 'us'"));
  EXPECT_TRUE(fails_with(parse_duration("5S"), "did you mean 's'"));
  EXPECT_TRUE(fails_with(parse_duration("5MS"), "did you mean 'ms'"));
  EXPECT_TRUE(fails_with(parse_duration("5Min"), "did you mean 'min'"));
  EXPECT_TRUE(fails_with(parse_duration("300y"), "use days"));
  EXPECT_TRUE(fails_with(parse_duration("2 weeks"), "'7d'"));
  EXPECT_TRUE(fails_with(parse_duration("5GB"), "'GB' is a unit of size"));
  const Parsed<SimTime> p = parse_duration("5mn");
  EXPECT_TRUE(fails_with(p, "unknown duration unit 'mn': did you mean"));
  EXPECT_TRUE(fails_with(p, "accepted units: ns, us"));
}

TEST(ParseDuration, SyntaxErrors) {
  EXPECT_TRUE(fails_with(parse_duration(""), "empty value"));
  EXPECT_TRUE(fails_with(parse_duration("ms"), "missing number before the unit 'ms'"));
  EXPECT_TRUE(fails_with(parse_duration("1 2s"), "unexpected second number '2' after '1'"));
  EXPECT_TRUE(fails_with(parse_duration("inf"), "not a finite number"));
  EXPECT_TRUE(fails_with(parse_duration("1..5s"), "more than one decimal point"));
  EXPECT_TRUE(fails_with(parse_duration("10s;"), "unexpected ';' after the unit 's'"));
}

// ---------------------------------------------------------------------------
// Error text conventions

TEST(ParseErrors, StartInLowerCaseAndNameNoLocation) {
  std::vector<std::string> errors;
  for (std::string_view text :
       {"", "GB", "12 34GB", "1..5GB", "nan", "80Gb", "80gb", "80Gx", "0.5B", "9000PiB", "80G",
        "80GiB!", "1,000B", "-", "1e", "8EiB", "80 bytes", "80s", "#"}) {
    errors.push_back(parse_bytes(text).error);
  }
  for (std::string_view text : {"50GB", "50GBps", "1e400GB/s", "10gb/s", "10G", "10Gbit/s"}) {
    errors.push_back(parse_bandwidth(text).error);
  }
  for (std::string_view text : {"600", "0.5ns", "1e20ns", "5m", "5sec", "300y", "5GB", "5x"}) {
    errors.push_back(parse_duration(text).error);
  }
  for (const std::string& e : errors) {
    ASSERT_FALSE(e.empty());
    EXPECT_FALSE(e[0] >= 'A' && e[0] <= 'Z') << e;
    EXPECT_EQ(e.find("error:"), std::string::npos) << e;
    EXPECT_NE(e.back(), '.') << e;
  }
}

TEST(ParseErrors, SuccessHasNoError) {
  const Parsed<int64_t> p = parse_bytes("1KiB");
  ASSERT_TRUE(p);
  EXPECT_TRUE(p.error.empty());
  EXPECT_EQ(*p, 1024);
}

// ---------------------------------------------------------------------------
// Accepted units

TEST(AcceptedUnits, ListsEveryKind) {
  EXPECT_EQ(accepted_units(UnitKind::kSize), "B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB");
  EXPECT_EQ(accepted_units(UnitKind::kBandwidth),
            "bps, Kbps, Mbps, Gbps, Tbps, b/s, Kb/s, Mb/s, Gb/s, Tb/s, B/s, KB/s, MB/s, GB/s, "
            "TB/s, KiB/s, MiB/s, GiB/s, TiB/s");
  EXPECT_EQ(accepted_units(UnitKind::kDuration), "ns, us, \xC2\xB5s, ms, s, min, h, d");
}

TEST(AcceptedUnits, EveryListedUnitParses) {
  for (const std::string& u : unit_names(UnitKind::kSize)) {
    EXPECT_TRUE(parse_bytes("1" + u)) << u;
  }
  for (const std::string& u : unit_names(UnitKind::kBandwidth)) {
    EXPECT_TRUE(parse_bandwidth("1" + u)) << u;
  }
  for (const std::string& u : unit_names(UnitKind::kDuration)) {
    EXPECT_TRUE(parse_duration("1" + u)) << u;
  }
}

// ---------------------------------------------------------------------------
// Formatting

TEST(FormatBytes, Examples) {
  EXPECT_EQ(format_bytes(85899345920), "80GiB");
  EXPECT_EQ(format_bytes(512000000), "512MB");
  EXPECT_EQ(format_bytes(1000), "1KB");
  EXPECT_EQ(format_bytes(1536), "1.5KiB");
  EXPECT_EQ(format_bytes(7), "7B");
  EXPECT_EQ(format_bytes(0), "0B");
  EXPECT_EQ(format_bytes(1024), "1KiB");
  EXPECT_EQ(format_bytes(1500), "1.5KB");
  EXPECT_EQ(format_bytes(-2048), "-2KiB");
  EXPECT_EQ(format_bytes(1048576000), "1000MiB");
  // Tie between 1000KiB, 1024KB and 1.024MB: no decimals, then binary.
  EXPECT_EQ(format_bytes(1024000), "1000KiB");
  EXPECT_EQ(format_bytes(kInt64Max), "9223372036854775807B");
  EXPECT_EQ(format_bytes(kInt64Min), "-8192PiB");
}

TEST(FormatBandwidth, Examples) {
  EXPECT_EQ(format_bandwidth(5e10), "50GB/s");
  EXPECT_EQ(format_bandwidth(4.65e10), "46.5GB/s");
  EXPECT_EQ(format_bandwidth(1.25e8), "125MB/s");
  EXPECT_EQ(format_bandwidth(0.5), "0.5B/s");
  EXPECT_EQ(format_bandwidth(0.0), "0B/s");
  EXPECT_EQ(format_bandwidth(999.0), "999B/s");
  EXPECT_EQ(format_bandwidth(1000.0), "1KB/s");
  EXPECT_EQ(format_bandwidth(1.5e15), "1500TB/s");
  EXPECT_EQ(format_bandwidth(-3e9), "-3GB/s");
  EXPECT_EQ(format_bandwidth(1e300), "1e288TB/s");
  EXPECT_EQ(format_bandwidth(1e-10), "1e-10B/s");
  EXPECT_THROW(format_bandwidth(std::nan("")), InvariantError);
}

TEST(FormatDuration, Examples) {
  EXPECT_EQ(format_duration(SimTime::us(2)), "2us");
  EXPECT_EQ(format_duration(SimTime::minutes(10)), "10min");
  EXPECT_EQ(format_duration(SimTime::days(54)), "54d");
  EXPECT_EQ(format_duration(SimTime::ns(1500000)), "1.5ms");
  EXPECT_EQ(format_duration(SimTime::zero()), "0s");
  EXPECT_EQ(format_duration(SimTime::ns(-5)), "-5ns");
  EXPECT_EQ(format_duration(SimTime::minutes(90)), "1.5h");
  EXPECT_EQ(format_duration(SimTime::s(100)), "100s");
  EXPECT_EQ(format_duration(SimTime::ns(1234)), "1.234us");
  EXPECT_EQ(format_duration(SimTime::ns(12345)), "12.345us");
  EXPECT_EQ(format_duration(SimTime::ns(1000001)), "1000.001us");
  EXPECT_EQ(format_duration(SimTime::ns(1000000001)), "1000000.001us");
}

// Values near every unit boundary and at random magnitudes.
std::vector<int64_t> interesting_integers() {
  std::vector<int64_t> values = {
      0,    1,    -1,   7,         999,       1000,          1001,         1023,
      1024, 1025, 1536, kInt64Max, kInt64Min, kInt64Max - 1, kInt64Min + 1};
  const int64_t units[] = {1,
                           1'000,
                           1'000'000,
                           1'000'000'000,
                           1'000'000'000'000,
                           1'000'000'000'000'000,
                           int64_t{1} << 10,
                           int64_t{1} << 20,
                           int64_t{1} << 30,
                           int64_t{1} << 40,
                           int64_t{1} << 50,
                           60'000'000'000,
                           3'600'000'000'000,
                           86'400'000'000'000};
  for (int64_t u : units) {
    for (int64_t k : {1, 2, 3, 10, 125, 999, 1000, 1001, 1024, 4096}) {
      if (k > kInt64Max / u) continue;
      values.push_back(u * k);
      values.push_back(-u * k);
      values.push_back(u * k + 1);
      if (u % 2 == 0) values.push_back(u * k + u / 2);
      if (u % 8 == 0) values.push_back(u * k + u / 8);
    }
  }
  // std::mt19937_64's output is fixed by the standard, so this is the same
  // sequence everywhere.
  std::mt19937_64 rng(42);
  for (int i = 0; i < 20000; ++i) {
    const auto shift = static_cast<int>(rng() % 64);
    values.push_back(std::bit_cast<int64_t>(rng()) >> shift);
  }
  return values;
}

TEST(RoundTrip, BytesFormatThenParseIsIdentity) {
  for (int64_t v : interesting_integers()) {
    const std::string text = format_bytes(v);
    const Parsed<int64_t> p = parse_bytes(text);
    ASSERT_TRUE(p) << v << " -> " << text << ": " << p.error;
    EXPECT_EQ(*p, v) << text;
  }
}

TEST(RoundTrip, DurationFormatThenParseIsIdentity) {
  for (int64_t v : interesting_integers()) {
    const std::string text = format_duration(SimTime::ns(v));
    const Parsed<SimTime> p = parse_duration(text);
    ASSERT_TRUE(p) << v << " -> " << text << ": " << p.error;
    EXPECT_EQ(p->count_ns(), v) << text;
  }
}

TEST(RoundTrip, BandwidthFormatThenParseIsIdentity) {
  std::vector<double> values = {
      0.0,  1.0,     0.5,     1e-300,        5e-324, 2.2250738585072014e-308,
      5e10, 4.65e10, 1.25e8,  1e15,          1e21,   1.7976931348623157e308,
      0.1,  1.0 / 3, 2.0 / 3, 123456789.123, -5e9};
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    const double d = std::bit_cast<double>(rng());
    if (std::isfinite(d)) values.push_back(d);
    // Realistic magnitudes: 1 B/s .. 10 TB/s with random low digits.
    values.push_back(std::ldexp(static_cast<double>(rng() >> 11), -53) *
                     std::pow(10.0, static_cast<double>(rng() % 14)));
  }
  for (double v : values) {
    const std::string text = format_bandwidth(v);
    const Parsed<double> p = parse_bandwidth(text);
    ASSERT_TRUE(p) << v << " -> " << text << ": " << p.error;
    EXPECT_EQ(*p, v) << text;
  }
}

TEST(RoundTrip, ParsedTextFormatsBackCanonically) {
  EXPECT_EQ(format_bytes(bytes("0.5GiB")), "512MiB");
  EXPECT_EQ(format_bandwidth(bandwidth("400Gbps")), "50GB/s");
  EXPECT_EQ(format_duration(SimTime::ns(duration_ns("3600s"))), "1h");
}

}  // namespace
}  // namespace clustersim::sim
