#pragma once
// Spin and combo boxes take the mouse wheel by default even when unfocused:
// a wheel turned to scroll past a panel then changes one of its settings.
// After takeWheelOnlyWhenFocused they take it only once clicked or tabbed
// into; an unfocused one passes the wheel on to its parent.

class QWidget;

namespace sa {

void takeWheelOnlyWhenFocused(QWidget* editor);

} // namespace sa
