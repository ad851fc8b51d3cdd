package cost

import "fmt"

// Dollars is an amount as people read it: cents, or four decimals below
// a cent so that a small figure does not show as $0.00.
func Dollars(usd float64) string {
	if usd != 0 && usd < 0.01 && usd > -0.01 {
		return fmt.Sprintf("$%.4f", usd)
	}
	return fmt.Sprintf("$%.2f", usd)
}
