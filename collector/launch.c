/* placeholder: module under construction */
