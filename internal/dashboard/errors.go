package dashboard

import (
	"errors"

	"github.com/benchq/benchq/internal/client"
)

func asAPIError(err error, target **client.APIError) bool { return errors.As(err, target) }
