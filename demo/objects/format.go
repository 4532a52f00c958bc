package objects

import (
	"fmt"
	"strconv"
)

func sprintf(f string, a ...any) string { return fmt.Sprintf(f, a...) }

func itoa(i int64) string { return strconv.FormatInt(i, 10) }
