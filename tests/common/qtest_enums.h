#pragma once
// QCOMPARE of two values of a core enum (sa::Recompute, sa::DType, ...).
// QTest prints a failed comparison with an unqualified toString(value) and
// frees the text with delete[]; argument-dependent lookup resolves that call
// to the core's sa::toString(enum), which returns a static string, so a
// failing comparison crashed the test instead of reporting. This
// qCompare, more specialised than QTest's own, prints a copy of the name.

#include <QTest>

#include <concepts>
#include <type_traits>

namespace QTest {

template <typename E>
requires std::is_enum_v<E> && requires(E e) {
    { toString(e) } -> std::same_as<const char*>;
}
inline bool qCompare(const E& t1, const E& t2, const char* actual, const char* expected,
                     const char* file, int line) {
    return compare_helper(
        t1 == t2, "Compared values are not the same", [&t1] { return qstrdup(toString(t1)); },
        [&t2] { return qstrdup(toString(t2)); }, actual, expected, file, line);
}

} // namespace QTest
